// serve's GPU path for MJPEG cameras (label gpu): a camera JPEG in page-locked memory becomes NV12 in
// VRAM through nvJPEG, within 1 of libjpeg-turbo's decode (the hardware engines are bit-exact on an
// H200; docs/gpu.md); a corrupt frame fails alone and the next one decodes.
#include <gtest/gtest.h>

#include <cstring>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "../gpu/gpu_test_support.hpp"
#include "../gpu/jpeg_test_support.hpp"
#include "zerohop/error.hpp"
#include "gpupath/gpu_path.hpp"
#include "zerohop/log.hpp"

namespace zerohop {
namespace {

using test::PinnedJpeg;

int maxDiff(const Frame& host, const test::HostImage& want) {
  int worst = 0;
  for (std::uint32_t p = 0; p < want.planeCount; ++p) {
    for (std::uint32_t y = 0; y < want.rows[p]; ++y) {
      for (std::uint32_t x = 0; x < want.rowBytes[p]; ++x) {
        const int got = host.data[p][std::size_t{y} * host.pitch[p] + x];
        worst = std::max(worst, std::abs(got - int(want.at(p, x, y))));
      }
    }
  }
  return worst;
}

using GpuPathMjpegTest = test::GpuTest;

TEST_F(GpuPathMjpegTest, CameraJpegsBecomeNv12InVramWithinOneOfLibjpegTurbo) {
  constexpr std::uint32_t w = 1280, h = 720;
  GpuFramePath path({device_, PixelFormat::kMJPEG, w, h, "", 8, "", /*hostCopy=*/true});
  EXPECT_NE(path.describe().find("nvJPEG"), std::string::npos) << path.describe();
  for (const int subsamp : {TJSAMP_422, TJSAMP_420}) {
    for (std::uint64_t index : {3u, 40u}) {
      const auto jpeg = testing::compressJpeg(testing::cameraPlanes(w, h, index), subsamp);
      PinnedJpeg src(jpeg, w, h, device_);
      src.frame.sequence = index;
      const GpuPathOutput out = path.process(src.frame);
      ASSERT_NE(out.host, nullptr);
      EXPECT_EQ(out.host->sequence, index);
      EXPECT_EQ(out.host->color.range, ColorRange::kFull) << "JFIF is full range";
      const test::HostImage want = test::expected420(test::turboDecode(jpeg), PixelFormat::kNV12);
      EXPECT_LE(maxDiff(*out.host, want), 1) << test::subsampName(subsamp) << " frame " << index;
    }
  }
}

// Two cameras' paths on the process's shared JpegBatcher (batchJpeg) decode, from two threads, the
// same bytes as a path with a decoder of its own (the host copy, read after the batched frame's ready event).
TEST_F(GpuPathMjpegTest, BatchedPathsOfTwoCamerasWriteWhatAnOwnDecoderWrites) {
  constexpr std::uint32_t w = 640, h = 480;
  GpuPathConfig own{device_, PixelFormat::kMJPEG, w, h, "", 8, "", /*hostCopy=*/true};
  GpuPathConfig batched = own;
  batched.batchJpeg = true;
  GpuFramePath reference(own), a(batched), b(batched);
  EXPECT_NE(a.describe().find("batches of up to"), std::string::npos) << a.describe();
  for (std::uint64_t index : {4u, 31u}) {
    const auto jpeg = testing::compressJpeg(testing::cameraPlanes(w, h, index), TJSAMP_422);
    PinnedJpeg src(jpeg, w, h, device_);
    src.frame.sequence = index;
    const GpuPathOutput want = reference.process(src.frame);
    ASSERT_NE(want.host, nullptr);
    GpuPathOutput gotA, gotB;
    std::thread ta([&] { gotA = a.process(src.frame); });
    std::thread tb([&] { gotB = b.process(src.frame); });
    ta.join();
    tb.join();
    for (const GpuPathOutput* got : {&gotA, &gotB}) {
      ASSERT_NE(got->host, nullptr);
      EXPECT_EQ(got->host->sequence, index);
      for (std::uint32_t p = 0; p < 2; ++p) {
        const std::uint32_t rows = p == 0 ? h : h / 2;
        for (std::uint32_t y = 0; y < rows; ++y) {
          ASSERT_EQ(std::memcmp(got->host->data[p] + std::size_t{y} * got->host->pitch[p],
                                want.host->data[p] + std::size_t{y} * want.host->pitch[p], w), 0)
              << "frame " << index << " plane " << p << " row " << y;
        }
      }
    }
  }
}

TEST_F(GpuPathMjpegTest, ACorruptFrameFailsAloneAndTheNextOneDecodes) {
  constexpr std::uint32_t w = 640, h = 480;
  GpuFramePath path({device_, PixelFormat::kMJPEG, w, h, "", 8, "", /*hostCopy=*/true});
  const auto good = testing::compressJpeg(testing::cameraPlanes(w, h, 9), TJSAMP_422);
  std::vector<std::uint8_t> truncated(good.begin(), good.begin() + static_cast<std::ptrdiff_t>(good.size() / 3));
  PinnedJpeg bad(truncated, w, h, device_);
  EXPECT_THROW(path.process(bad.frame), Error);
  PinnedJpeg next(good, w, h, device_);
  const GpuPathOutput out = path.process(next.frame);
  ASSERT_NE(out.host, nullptr);
  EXPECT_LE(maxDiff(*out.host, test::expected420(test::turboDecode(good), PixelFormat::kNV12)), 1);
}

// serve tells the user whether the camera's JPEGs get the restart-strip decode (several JPEG engines)
// or the whole-frame one: on the first frame, then when that changes, and never once per frame.
TEST_F(GpuPathMjpegTest, SaysWhetherTheCameraJpegsAreSplitIntoStrips) {
  constexpr std::uint32_t w = 1920, h = 1080;
  GpuFramePath path({device_, PixelFormat::kMJPEG, w, h, "", 8, "", /*hostCopy=*/true});
  if (path.describe().find(" hardware ") == std::string::npos)
    GTEST_SKIP() << "restart strips need the hardware JPEG engines (A100/H100/H200): " << path.describe();
  std::vector<std::string> lines;
  log::setSink([&](log::Level, std::string_view line) {
    if (line.find("MJPEG: ") != std::string_view::npos) lines.emplace_back(line);
  });
  const auto planes = testing::cameraPlanes(w, h, 5);
  const auto striped = test::compressWithTjEnv(planes, TJSAMP_422, "TJ_RESTART", "1");
  const auto whole = testing::compressJpeg(planes, TJSAMP_422);
  ASSERT_TRUE(test::hasRestartInterval(striped));
  ASSERT_FALSE(test::hasRestartInterval(whole));
  auto run = [&](const std::vector<std::uint8_t>& jpeg, int times) {
    PinnedJpeg src(jpeg, w, h, device_);
    for (int i = 0; i < times; ++i) ASSERT_NE(path.process(src.frame).host, nullptr);
  };
  run(striped, 3);
  run(whole, 2);
  for (int i = 0; i < 4; ++i) {  // a camera that keeps switching: three lines in all
    run(striped, 1);
    run(whole, 1);
  }
  log::setSink(nullptr);
  ASSERT_EQ(lines.size(), 3u);
  EXPECT_NE(lines[0].find("each is decoded as 7 strips on the JPEG engines"), std::string::npos) << lines[0];
  EXPECT_NE(lines[1].find("decoded whole, each by one JPEG engine"), std::string::npos) << lines[1];
  EXPECT_NE(lines[2].find("strips"), std::string::npos) << lines[2];
}

}  // namespace
}  // namespace zerohop
