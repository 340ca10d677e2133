// readFrameTimecode on device frames: the timecode drawn on the host reads back the same from VRAM
// (NV12, YUYV; padded rows), and a damaged strip reads as none.
#include <gtest/gtest.h>

#include "gpu/device_timecode.hpp"
#include "gpu_test_support.hpp"
#include "zerohop/timecode.hpp"

namespace zerohop::test {
namespace {

Frame hostView(HostImage& im) {
  Frame f;
  f.format = im.format;
  f.width = im.width;
  f.height = im.height;
  f.planeCount = im.planeCount;
  for (std::uint32_t p = 0; p < im.planeCount; ++p) {
    f.data[p] = im.plane[p].data();
    f.pitch[p] = im.pitch[p];
  }
  return f;
}

class DeviceTimecodeTest : public GpuTest, public ::testing::WithParamInterface<PixelFormat> {};

TEST_P(DeviceTimecodeTest, TheTimecodeDrawnOnTheHostReadsBackFromVram) {
  for (const auto& [w, h] : {std::pair{1920u, 1080u}, std::pair{640u, 360u}}) {
    HostImage im = makeImage(GetParam(), w, h, /*extraPitch=*/64, 0x80);
    Frame host = hostView(im);
    const Timecode drawn{0x123456789ALL & kTimecodeMsMask, 0xABCDE};
    ASSERT_TRUE(drawTimecode(host, drawn));
    PlacedFrame dev(im, MemoryKind::kDevice, device_);
    dev.frame.gpu.device = device_;
    const auto got = gpu::readFrameTimecode(dev.frame);
    ASSERT_TRUE(got.has_value()) << w << "x" << h;
    EXPECT_EQ(*got, drawn) << w << "x" << h;
  }
}

TEST_P(DeviceTimecodeTest, ADamagedStripReadsAsNoTimecode) {
  HostImage im = makeImage(GetParam(), 1280, 720, 0, 0x80);
  Frame host = hostView(im);
  ASSERT_TRUE(drawTimecode(host, Timecode{1000, 7}));
  PlacedFrame dev(im, MemoryKind::kDevice, device_);
  // Paint the sync cells' row white: the sync pattern 1 0 1 0 no longer matches.
  const std::uint32_t cell = timecodeCellSize(1280);
  cuda::check(cudaMemset(dev.frame.data[0] + std::size_t{cell / 2} * dev.frame.pitch[0], 235, 4 * cell * 2),
              "cudaMemset(damage)");
  cuda::check(cudaDeviceSynchronize(), "cudaDeviceSynchronize(damage)");
  EXPECT_FALSE(gpu::readFrameTimecode(dev.frame).has_value());
}

INSTANTIATE_TEST_SUITE_P(Formats, DeviceTimecodeTest, ::testing::Values(PixelFormat::kNV12, PixelFormat::kYUYV),
                         [](const auto& p) { return std::string(formatName(p.param)); });

}  // namespace
}  // namespace zerohop::test
