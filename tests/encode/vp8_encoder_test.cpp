// The VP8 encoder end to end: test camera -> CPU converter -> libvpx -> libavcodec's own VP8 decoder.
// Checks one frame out per frame in, keyframes exactly where forced (and the first), the decoded
// picture against the input (PSNR >= 30 dB, timecode readable), the rate near the CBR target, a rate
// change on the running encoder (no keyframe), and that it refuses what it was not opened for.
#include <gtest/gtest.h>

#include <algorithm>

#include "camera_frames.hpp"
#include "decoded_check.hpp"
#include "convert/test_image.hpp"
#include "h264_test_decoder.hpp"
#include "convert/converter.hpp"
#include "zerohop/encoder.hpp"
#include "zerohop/error.hpp"
#include "zerohop/source.hpp"
#include "zerohop/timecode.hpp"

namespace zerohop {
namespace {

using testing::TestImage;
using testing::kFps;
using testing::kH;
using testing::kW;
constexpr std::size_t kFrames = 90;  // of the shared 150

const std::vector<TestImage>& cameraFrames() { return testing::cameraFrames().i420; }

EncoderConfig vp8Config(std::uint32_t kbps, std::uint32_t keyint) { return testing::cameraConfig("vp8", kbps, keyint); }

// libavcodec's native VP8 decoder (not libvpx): an independent reference for the stream.
testing::H264TestDecoder vp8Decoder() { return testing::H264TestDecoder(AV_CODEC_ID_VP8); }

// VP8 frame tag (RFC 6386 §9.1): bit 0 of the first byte is 0 for a keyframe.
bool isVp8Keyframe(const EncodedUnit& u) { return !u.bytes.empty() && (u.bytes[0] & 1) == 0; }

TEST(Vp8Encoder, DecodedPictureMatchesInputAndCarriesTheTimecode) {
  const auto& frames = cameraFrames();
  auto enc = makeEncoder(vp8Config(2500, 30));
  EXPECT_EQ(enc->name(), "libvpx VP8 (realtime, cpu-used 8, CBR 2500 kb/s)");
  auto decoder = vp8Decoder();
  double worstY = 99;
  for (std::size_t i = 0; i < 60; ++i) {
    const Frame& in = frames[i].frame();
    auto unit = enc->encode(in, false);
    ASSERT_TRUE(unit) << "frame " << i;
    EXPECT_EQ(unit->codec, Codec::kVP8);
    EXPECT_EQ(unit->sequence, in.sequence);
    EXPECT_EQ(unit->ptsNs, in.captureNs());
    EXPECT_GE(unit->times.at(Stage::kEncode), in.times.at(Stage::kConvert));
    auto pics = decoder.decode(*unit);
    ASSERT_EQ(pics.size(), 1u) << "frame " << i;
    worstY = std::min(worstY, testing::expectDecodedMatches(in, testing::asFrame(*pics[0]), i));
  }
  std::cout << "  worst luma PSNR at 2500 kb/s 640x360 (VP8): " << worstY << " dB\n";
  const EncoderStats s = enc->stats();
  EXPECT_EQ(s.framesIn, 60u);
  EXPECT_EQ(s.unitsOut, 60u);
  EXPECT_EQ(s.emptyOutputs, 0u);
  EXPECT_EQ(s.keyframes, 2u);  // frame 0 and frame 30 (the interval)
}

TEST(Vp8Encoder, ForcedKeyframeLandsOnTheExactFrame) {
  const auto& frames = cameraFrames();
  auto enc = makeEncoder(vp8Config(1500, 0));  // keyframes only on request
  auto decoder = vp8Decoder();
  for (std::size_t i = 0; i < 60; ++i) {
    const bool force = i == 17 || i == 41 || i == 42;
    auto unit = enc->encode(frames[i].frame(), force);
    ASSERT_TRUE(unit);
    EXPECT_EQ(unit->keyframe, i == 0 || force) << "frame " << i;
    EXPECT_EQ(isVp8Keyframe(*unit), i == 0 || force) << "frame " << i;
    EXPECT_EQ(decoder.decode(*unit).size(), 1u);
  }
  EXPECT_EQ(enc->stats().keyframes, 4u);
}

TEST(Vp8Encoder, HoldsTheCbrTarget) {
  const auto& frames = cameraFrames();
  constexpr std::uint32_t kKbps = 1000;
  auto enc = makeEncoder(vp8Config(kKbps, 0));
  std::size_t bytes = 0;
  for (std::size_t i = 0; i < kFrames; ++i) {
    auto unit = enc->encode(frames[i].frame(), false);
    ASSERT_TRUE(unit);
    if (i >= 30) bytes += unit->bytes.size();  // after the first keyframe's buffer settles
  }
  const double kbps = bytes * 8.0 * kFps / static_cast<double>(kFrames - 30) / 1000.0;
  std::cout << "  measured " << kbps << " kb/s for " << kKbps << " (VP8 CBR)\n";
  EXPECT_NEAR(kbps, kKbps, 0.35 * kKbps);
}

// Congestion control lowers a running encode's bitrate: the next ~2 s of frames come out near the new
// rate, every frame still decodes, and the change costs no keyframe.
TEST(Vp8Encoder, RateFollowsSetBitrateWithoutAKeyframe) {
  const auto& frames = cameraFrames();
  constexpr std::uint32_t kHigh = 2000, kLow = 500;
  constexpr std::size_t kChangeAt = 60, kSettle = 10, kEnd = 150;  // 2 s at kHigh, 3 s at kLow
  auto enc = makeEncoder(vp8Config(kHigh, 0));  // keyframes on request only: any other is the change's
  auto decoder = vp8Decoder();
  std::size_t before = 0, after = 0;
  for (std::size_t i = 0; i < kEnd; ++i) {
    if (i == kChangeAt) enc->setBitrate(kLow);
    auto unit = enc->encode(frames[i % frames.size()].frame(), false);
    ASSERT_TRUE(unit) << "frame " << i;
    EXPECT_EQ(isVp8Keyframe(*unit), i == 0) << "frame " << i;
    EXPECT_EQ(decoder.decode(*unit).size(), 1u) << "frame " << i;
    if (i >= 30 && i < kChangeAt) before += unit->bytes.size();
    if (i >= kChangeAt + kSettle) after += unit->bytes.size();
  }
  const auto kbps = [](std::size_t bytes, std::size_t n) { return bytes * 8.0 * kFps / static_cast<double>(n) / 1000; };
  const double high = kbps(before, kChangeAt - 30), low = kbps(after, kEnd - kChangeAt - kSettle);
  std::cout << "  VP8 " << kHigh << " kb/s: measured " << high << "; after setBitrate(" << kLow << "): " << low << "\n";
  EXPECT_NEAR(high, kHigh, 0.35 * kHigh);
  EXPECT_NEAR(low, kLow, 0.35 * kLow);
  EXPECT_EQ(enc->stats().keyframes, 1u);
}

TEST(Vp8Encoder, RefusesWhatItWasNotOpenedFor) {
  EncoderConfig nv12 = vp8Config(1500, 30);
  nv12.inputFormat = PixelFormat::kNV12;
  try {
    (void)makeEncoder(nv12);
    FAIL() << "a VP8 encoder for NV12 input opened";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), Errc::kInvalidArgument);
    EXPECT_NE(std::string(e.what()).find("I420"), std::string::npos) << e.what();
  }
  auto enc = makeEncoder(vp8Config(1500, 30));
  TestImage small(PixelFormat::kI420, 320, 180, 32);
  EXPECT_THROW((void)enc->encode(small.frame(), false), Error);
  EXPECT_THROW(enc->setBitrate(0), Error);
}

}  // namespace
}  // namespace zerohop
