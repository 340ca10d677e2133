#pragma once
// Shared pieces of the FFmpeg gpu tests: an NV12 test image (luma 50 left, 200 right; a chroma
// gradient), a byte-for-byte check of a host AVFrame against it, and the fixture that skips
// without a CUDA device. Thread-safety: test code, thread-bound.

#include <gtest/gtest.h>
#include <unistd.h>

extern "C" {
#include <libavutil/frame.h>
}

#include <cstring>
#include <string>
#include <vector>

#include "zerohop/frame.hpp"
#include "zerohop/gpu.hpp"
#include "zerohop/pixel_format.hpp"

namespace zerohop::ffmpeg_test {

inline constexpr std::uint32_t kW = 640, kH = 360;

// NV12: luma 50 on the left half, 200 on the right; chroma rows a gradient.
inline std::vector<std::uint8_t> halvesNv12(const ImageLayout& l, Frame& f) {
  std::vector<std::uint8_t> buf(l.totalBytes, 0);
  for (std::uint32_t r = 0; r < l.planes[0].rows; ++r) {
    for (std::uint32_t x = 0; x < kW; ++x)
      buf[l.planes[0].offset + std::size_t{r} * l.planes[0].pitch + x] = x < kW / 2 ? 50 : 200;
  }
  for (std::uint32_t r = 0; r < l.planes[1].rows; ++r) {
    for (std::uint32_t x = 0; x < kW; ++x) {
      buf[l.planes[1].offset + std::size_t{r} * l.planes[1].pitch + x] =
          static_cast<std::uint8_t>(64 + (x + r) % 128);
    }
  }
  bindLayout(f, l, buf.data(), MemoryKind::kHost);
  f.format = PixelFormat::kNV12;
  f.width = kW;
  f.height = kH;
  return buf;
}

inline void expectSameNv12(const AVFrame& host, const Frame& ref, const ImageLayout& l) {
  ASSERT_EQ(host.format, AV_PIX_FMT_NV12);
  for (std::uint32_t p = 0; p < 2; ++p) {
    for (std::uint32_t r = 0; r < l.planes[p].rows; ++r) {
      ASSERT_EQ(std::memcmp(host.data[p] + std::size_t{r} * host.linesize[p],
                            ref.data[p] + std::size_t{r} * ref.pitch[p], l.planes[p].widthBytes),
                0)
          << "plane " << p << " row " << r;
    }
  }
}

class FfmpegGpu : public ::testing::Test {
 protected:
  void SetUp() override {
    const GpuInfo info = probeGpu();
    if (!info.available) GTEST_SKIP() << "no CUDA device: " << info.reason;
    device_ = info.device;
    name_ = std::string("ffm-gpu-") + ::testing::UnitTest::GetInstance()->current_test_info()->name() + "-" +
            std::to_string(getpid());
  }
  int device_ = 0;
  std::string name_;
};

}  // namespace zerohop::ffmpeg_test
