// The pure planning logic of the nvJPEG decoder (which chroma goes where, what is refused); no device.
#include <gtest/gtest.h>

#include "gpu/jpeg_plan.hpp"
#include "zerohop/error.hpp"
#include "zerohop/gpu_jpeg.hpp"

namespace zerohop::jpeg {
namespace {

using Kind = ChromaPlan::Kind;

TEST(GpuJpegPlan, ChromaFactorsPerSubsampling) {
  const auto p422 = planChroma({1920, 1080, 3, 960, 1080}, PixelFormat::kNV12, 1920, 1080);
  EXPECT_EQ(p422.kind, Kind::kResample);
  EXPECT_EQ(p422.sx, 1u);
  EXPECT_EQ(p422.sy, 2u);
  EXPECT_EQ(p422.scratchPitch, 1024u);
  EXPECT_EQ(p422.scratchBytes, 1024u * 1080 * 2);
  const auto p444 = planChroma({1280, 720, 3, 1280, 720}, PixelFormat::kI420, 1280, 720);
  EXPECT_EQ(p444.kind, Kind::kResample);
  EXPECT_EQ(p444.sx, 2u);
  EXPECT_EQ(p444.sy, 2u);
  const auto p440 = planChroma({1280, 720, 3, 1280, 360}, PixelFormat::kI420, 1280, 720);
  EXPECT_EQ(p440.sx, 2u);
  EXPECT_EQ(p440.sy, 1u);
  EXPECT_EQ(planChroma({1280, 720, 3, 640, 360}, PixelFormat::kI420, 1280, 720).kind, Kind::kDirect);
  const auto nv12 = planChroma({1280, 720, 3, 640, 360}, PixelFormat::kNV12, 1280, 720);
  EXPECT_EQ(nv12.kind, Kind::kResample);
  EXPECT_EQ(nv12.sx * nv12.sy, 1u);
  EXPECT_EQ(planChroma({1280, 720, 1, 0, 0}, PixelFormat::kNV12, 1280, 720).kind, Kind::kGrey);
}

TEST(GpuJpegPlan, RefusesWhatItCannotDecode) {
  auto code = [](const Geometry& g, PixelFormat f, std::uint32_t w, std::uint32_t h) {
    try {
      planChroma(g, f, w, h);
    } catch (const Error& e) {
      return e.code();
    }
    return Errc::kInternal;
  };
  EXPECT_EQ(code({1280, 720, 3, 320, 720}, PixelFormat::kNV12, 1280, 720), Errc::kUnsupported);  // 4:1:1
  EXPECT_EQ(code({1280, 720, 3, 640, 360}, PixelFormat::kNV12, 1920, 1080), Errc::kInvalidArgument);
  EXPECT_EQ(code({65500, 65500, 3, 32750, 32750}, PixelFormat::kNV12, 1280, 720), Errc::kInvalidArgument);
  EXPECT_EQ(code({1279, 720, 3, 640, 360}, PixelFormat::kNV12, 1279, 720), Errc::kInvalidArgument);
  EXPECT_EQ(code({1280, 720, 3, 640, 360}, PixelFormat::kYUYV, 1280, 720), Errc::kInvalidArgument);
  EXPECT_EQ(code({1280, 720, 4, 1280, 720}, PixelFormat::kNV12, 1280, 720), Errc::kUnsupported);
}

TEST(GpuJpegPlan, BackendNames) {
  EXPECT_STREQ(jpegBackendName(JpegBackend::kHardware), "hardware");
  EXPECT_STREQ(jpegBackendName(JpegBackend::kGpuHybrid), "gpu-hybrid");
}

// Without a usable GPU (this machine, CI) the decoder refuses with a reason, and probeJpeg says why.
TEST(GpuJpegPlan, WithoutAGpuTheDecoderSaysWhy) {
  const JpegSupport s = probeJpeg(-1);
  if (s.available) GTEST_SKIP() << "nvJPEG is usable here; this case is for machines without a GPU";
  EXPECT_FALSE(s.reason.empty());
  try {
    GpuJpegDecoder decoder(0);
    ADD_FAILURE() << "constructed without a GPU";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), Errc::kUnavailable) << e.what();
  }
}

}  // namespace
}  // namespace zerohop::jpeg
