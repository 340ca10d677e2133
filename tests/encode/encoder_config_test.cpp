// Encoder selection and configuration errors (no frame is encoded), and H.264 level selection.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "zerohop/encoder.hpp"
#include "zerohop/nvenc.hpp"
#include "zerohop/error.hpp"

namespace zerohop {
namespace {

void expectConfigError(const EncoderConfig& c, Errc code, const char* needle) {
  try {
    makeEncoder(c);
    ADD_FAILURE() << "makeEncoder accepted a bad config; expected '" << needle << "'";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), code) << e.what();
    EXPECT_NE(std::string(e.what()).find(needle), std::string::npos) << e.what();
  }
}

TEST(EncoderConfig, DefaultsOpenAnX264Encoder) {
  auto enc = makeEncoder(EncoderConfig{});
  ASSERT_TRUE(enc);
  EXPECT_EQ(enc->name(), "libx264 (superfast, zerolatency, CBR 2500 kb/s)");
  EncoderConfig c;
  c.encoder = "auto";  // host I420 input: x264 whether or not NVENC is there
  EXPECT_EQ(makeEncoder(c)->name(), "libx264 (superfast, zerolatency, CBR 2500 kb/s)");
}

// "auto" (the default preset) follows the measured cost per macroblock rate: superfast up to 1080p30's
// rate (720p60 included), ultrafast above it; a named preset is kept at any rate.
TEST(EncoderConfig, AutoPresetFollowsTheMacroblockRate) {
  struct Case {
    std::uint32_t width, height;
    double fps;
    const char* preset;
  };
  for (const Case& k : {Case{1280, 720, 30, "superfast"}, Case{1280, 720, 60, "superfast"},
                        Case{1920, 1080, 30, "superfast"}, Case{1920, 1080, 50, "ultrafast"},
                        Case{1920, 1080, 60, "ultrafast"}}) {
    EncoderConfig c;
    c.width = k.width;
    c.height = k.height;
    c.fps = k.fps;
    c.bitrateKbps = 5000;
    EXPECT_EQ(makeEncoder(c)->name(), std::string("libx264 (") + k.preset + ", zerolatency, CBR 5000 kb/s)")
        << k.width << "x" << k.height << "@" << k.fps;
  }
  EncoderConfig c;
  c.width = 1920;
  c.height = 1080;
  c.fps = 60;
  c.bitrateKbps = 5000;
  c.preset = "veryfast";
  EXPECT_EQ(makeEncoder(c)->name(), "libx264 (veryfast, zerolatency, CBR 5000 kb/s)");
}

TEST(EncoderConfig, BadValuesGiveClearErrors) {
  EncoderConfig c;
  c.width = 641;
  expectConfigError(c, Errc::kInvalidArgument, "even width and height");
  c = {};
  c.height = 361;
  expectConfigError(c, Errc::kInvalidArgument, "1280x361 is odd");
  c = {};
  c.width = 0;
  expectConfigError(c, Errc::kInvalidArgument, "0x720");
  c = {};
  c.fps = 0;
  expectConfigError(c, Errc::kInvalidArgument, "frame rate");
  c.fps = std::numeric_limits<double>::quiet_NaN();
  expectConfigError(c, Errc::kInvalidArgument, "frame rate");
  c = {};
  c.bitrateKbps = 0;
  expectConfigError(c, Errc::kInvalidArgument, "bitrate 0");
  c = {};
  c.preset = "warp";
  expectConfigError(c, Errc::kInvalidArgument, "preset 'warp'");
  c = {};
  c.threads = -1;
  expectConfigError(c, Errc::kInvalidArgument, "threads");
  c = {};
  c.inputFormat = PixelFormat::kYUYV;
  expectConfigError(c, Errc::kInvalidArgument, "i420 or nv12");
  c = {};
  c.width = 8192;
  c.height = 8192;
  expectConfigError(c, Errc::kInvalidArgument, "level 5.2");
}

TEST(EncoderConfig, UnknownEncoderNamesTheChoices) {
  EncoderConfig c;
  c.encoder = "vp9";
  expectConfigError(c, Errc::kInvalidArgument, "unknown encoder 'vp9'; choose x264, nvenc or auto (or vp8)");
}

TEST(EncoderConfig, NvencWhereItIsMissingNamesTheFix) {
  const NvencAvailability nvenc = probeNvenc(0);
  if (nvenc.available) GTEST_SKIP() << "NVENC is available here (" << nvenc.status << "): nothing missing to report";
  EncoderConfig c;
  c.encoder = "nvenc";
  c.inputFormat = PixelFormat::kNV12;
  c.inputMemory = MemoryKind::kDevice;
  expectConfigError(c, nvenc.status == "not built" ? Errc::kUnsupported : Errc::kUnavailable, "use the x264 encoder");
}

TEST(H264Level, LowestLevelThatHoldsTheStreamNeverBelow31) {
  EXPECT_EQ(h264LevelIdc(640, 360, 30, 1000), 31);
  EXPECT_EQ(h264LevelIdc(1280, 720, 30, 2500), 31);
  EXPECT_EQ(h264LevelIdc(1280, 720, 30, 20000), 32) << "14 Mb/s is level 3.1's cap";
  EXPECT_EQ(h264LevelIdc(1280, 720, 60, 4000), 32);
  EXPECT_EQ(h264LevelIdc(1920, 1080, 30, 5000), 40);
  EXPECT_EQ(h264LevelIdc(1920, 1080, 60, 8000), 42);
  EXPECT_EQ(h264LevelIdc(3840, 2160, 30, 20000), 51);
  EXPECT_EQ(h264LevelIdc(4096, 2160, 60, 20000), 52);
  EXPECT_THROW(h264LevelIdc(4096, 2304, 60, 20000), Error);
  EXPECT_THROW(h264LevelIdc(8192, 8192, 30, 20000), Error);

  EncoderConfig c;
  EXPECT_EQ(h264ProfileLevelId(c), "42e01f");
  c.width = 1920;
  c.height = 1080;
  EXPECT_EQ(h264ProfileLevelId(c), "42e028");
}

}  // namespace
}  // namespace zerohop
