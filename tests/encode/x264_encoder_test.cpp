// The x264 encoder end to end: test camera -> CPU converter -> encoder -> libavcodec's H.264
// decoder. Checks the stream's shape (one AU per frame, SPS/PPS before every IDR, constrained
// baseline, no B-frames, IDRs exactly where asked), its picture (PSNR >= 30 dB, timecode readable
// from the decoded picture) and its rate (within +-35% over 60 frames, and following setBitrate).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <functional>

#include "convert/test_image.hpp"
#include "encode/annexb.hpp"
#include "camera_frames.hpp"
#include "decoded_check.hpp"
#include "h264_test_decoder.hpp"
#include "convert/converter.hpp"
#include "zerohop/encoder.hpp"
#include "zerohop/error.hpp"
#include "zerohop/source.hpp"
#include "zerohop/timecode.hpp"

namespace zerohop {
namespace {

using testing::TestImage;
using testing::cameraFrames;
using testing::kFps;
using testing::kFrames;
using testing::kH;
using testing::kW;

EncoderConfig config640(std::uint32_t kbps = 1500, std::uint32_t keyint = 30) {
  return testing::cameraConfig("x264", kbps, keyint);
}

double kbpsOf(const std::vector<EncodedUnitPtr>& units, std::size_t first, std::size_t count) {
  std::size_t bytes = 0;
  for (std::size_t i = first; i < first + count; ++i) bytes += units[i]->bytes.size();
  return bytes * 8.0 * kFps / static_cast<double>(count) / 1000.0;
}

TEST(X264Encoder, OneAccessUnitPerFrameWithParameterSetsBeforeEveryIdr) {
  const auto& frames = cameraFrames().i420;
  auto enc = makeEncoder(config640(1500, 30));
  testing::H264TestDecoder decoder;
  for (std::size_t i = 0; i < 90; ++i) {
    auto unit = enc->encode(frames[i].frame(), false);
    ASSERT_TRUE(unit) << "no access unit for frame " << i;
    const auto types = encode::nalTypes(unit->bytes.data(), unit->bytes.size());
    const bool idr = std::find(types.begin(), types.end(), 5) != types.end();
    EXPECT_EQ(idr, i % 30 == 0) << "frame " << i << ": IDRs come every 30 frames and only then";
    EXPECT_EQ(unit->keyframe, idr) << "frame " << i;
    if (idr) {
      // SPS (7) then PPS (8) precede the first IDR slice.
      const auto sps = std::find(types.begin(), types.end(), 7);
      const auto pps = std::find(types.begin(), types.end(), 8);
      const auto slice = std::find(types.begin(), types.end(), 5);
      EXPECT_TRUE(sps < pps && pps < slice) << "frame " << i << ": SPS/PPS must come before the IDR slice";
    } else {
      EXPECT_EQ(std::count(types.begin(), types.end(), 7), 0) << "SPS only with IDRs";
    }
    ASSERT_EQ(unit->bytes[0], 0);
    ASSERT_EQ(unit->bytes[1], 0);  // Annex B start code first
    const auto pics = decoder.decode(*unit);
    ASSERT_EQ(pics.size(), 1u) << "frame " << i << " did not decode to exactly one picture at once";
    EXPECT_NE(pics[0]->pict_type, AV_PICTURE_TYPE_B) << "frame " << i;
    EXPECT_EQ(pics[0]->pict_type, idr ? AV_PICTURE_TYPE_I : AV_PICTURE_TYPE_P) << "frame " << i;
  }
  const auto s = enc->stats();
  EXPECT_EQ(s.framesIn, 90u);
  EXPECT_EQ(s.unitsOut, 90u);
  EXPECT_EQ(s.emptyOutputs, 0u);
  EXPECT_EQ(s.keyframes, 3u);
}

TEST(X264Encoder, SpsIsConstrainedBaselineAtTheAdvertisedLevel) {
  const auto cfg = config640();
  auto enc = makeEncoder(cfg);
  auto unit = enc->encode(cameraFrames().i420[0].frame(), false);
  ASSERT_TRUE(unit);
  const auto sps = testing::firstSps(unit->bytes);
  EXPECT_EQ(sps.profileIdc, 66) << "baseline";
  EXPECT_TRUE(sps.constraintFlags & 0x40) << "constraint_set1_flag: constrained baseline";
  EXPECT_EQ(sps.levelIdc, h264LevelIdc(cfg.width, cfg.height, cfg.fps, cfg.bitrateKbps));
  EXPECT_EQ(h264ProfileLevelId(cfg), "42e01f");
  EXPECT_EQ(enc->name(), "libx264 (superfast, zerolatency, CBR 1500 kb/s)");
}

TEST(X264Encoder, ForcedKeyframeLandsOnTheExactFrame) {
  const auto& frames = cameraFrames().i420;
  auto enc = makeEncoder(config640(1500, 0));  // keyframes only on request
  for (std::size_t i = 0; i < 60; ++i) {
    const bool force = i == 17 || i == 41 || i == 42;
    auto unit = enc->encode(frames[i].frame(), force);
    ASSERT_TRUE(unit);
    EXPECT_EQ(unit->keyframe, i == 0 || force) << "frame " << i;
    EXPECT_EQ(encode::containsIdr(unit->bytes.data(), unit->bytes.size()), i == 0 || force) << "frame " << i;
  }
  EXPECT_EQ(enc->stats().keyframes, 4u);
}

TEST(X264Encoder, DecodedPictureMatchesInputAndCarriesTheTimecode) {
  const auto& frames = cameraFrames().i420;
  // 2500 kb/s: the one-frame VBV caps an IDR at one frame's share (10 kB here), and the test
  // camera's sensor noise makes that the hardest frame; P-frames then refine it.
  auto enc = makeEncoder(config640(2500, 30));
  testing::H264TestDecoder decoder;
  double worstY = 99;
  for (std::size_t i = 0; i < 60; ++i) {
    const Frame& in = frames[i].frame();
    auto unit = enc->encode(in, false);
    ASSERT_TRUE(unit);
    auto pics = decoder.decode(*unit);
    ASSERT_EQ(pics.size(), 1u);
    const Frame out = testing::asFrame(*pics[0]);
    worstY = std::min(worstY, testing::expectDecodedMatches(in, out, i));
    const auto tc = readTimecode(out);
    ASSERT_TRUE(tc.has_value()) << "timecode unreadable in decoded frame " << i;
    EXPECT_EQ(tc->wallClockMs, static_cast<std::uint64_t>(in.wallClockMs) & kTimecodeMsMask);
  }
  std::cout << "  worst luma PSNR at 2500 kb/s 640x360: " << worstY << " dB\n";
}

TEST(X264Encoder, CopiesFrameMetadataAndMarksEncode) {
  const Frame& in = cameraFrames().i420[3].frame();
  auto enc = makeEncoder(config640());
  auto unit = enc->encode(in, false);
  ASSERT_TRUE(unit);
  EXPECT_EQ(unit->codec, Codec::kH264);
  EXPECT_EQ(unit->width, kW);
  EXPECT_EQ(unit->height, kH);
  EXPECT_EQ(unit->sequence, in.sequence);
  EXPECT_EQ(unit->wallClockMs, in.wallClockMs);
  EXPECT_EQ(unit->ptsNs, in.captureNs());
  EXPECT_EQ(unit->times.at(Stage::kCapture), in.times.at(Stage::kCapture));
  EXPECT_EQ(unit->times.at(Stage::kConvert), in.times.at(Stage::kConvert));
  EXPECT_GE(unit->times.at(Stage::kEncode), in.times.at(Stage::kConvert));
  EXPECT_GT(in.times.at(Stage::kConvert), 0);
}

TEST(X264Encoder, BitrateHoldsTargetAndFollowsSetBitrate) {
  const auto& frames = cameraFrames().i420;
  constexpr std::uint32_t kHigh = 1500, kLow = 500;
  auto enc = makeEncoder(config640(kHigh, 0));  // no periodic IDR: only frame 0
  std::vector<EncodedUnitPtr> units;
  for (std::size_t i = 0; i < 75; ++i) units.push_back(enc->encode(frames[i].frame(), false));
  enc->setBitrate(kLow);
  EXPECT_EQ(enc->name(), "libx264 (superfast, zerolatency, CBR 500 kb/s)");
  for (std::size_t i = 75; i < 150; ++i) units.push_back(enc->encode(frames[i].frame(), false));
  for (const auto& u : units) ASSERT_TRUE(u);

  const double high = kbpsOf(units, 15, 60);  // after the first IDR's ramp
  const double low = kbpsOf(units, 90, 60);   // after the change settled
  std::cout << "  measured " << high << " kb/s for " << kHigh << ", then " << low << " kb/s for " << kLow
            << "\n";
  EXPECT_NEAR(high, kHigh, 0.35 * kHigh);
  EXPECT_NEAR(low, kLow, 0.35 * kLow);
  for (std::size_t i = 1; i < units.size(); ++i) {
    EXPECT_FALSE(units[i]->keyframe) << "frame " << i << ": a bitrate change must not restart the stream";
  }
  // One-frame VBV: no frame after the change is far above one frame's share of the new rate.
  const double frameBudgetBytes = kLow * 1000.0 / 8.0 / kFps;
  for (std::size_t i = 80; i < 150; ++i)
    EXPECT_LT(units[i]->bytes.size(), 2.5 * frameBudgetBytes) << "frame " << i;
}

TEST(X264Encoder, EncodesNv12Input) {
  const auto& frames = cameraFrames();
  auto cfg = config640(2500);
  cfg.inputFormat = PixelFormat::kNV12;
  auto enc = makeEncoder(cfg);
  testing::H264TestDecoder decoder;
  for (std::size_t i = 0; i < 10; ++i) {
    auto unit = enc->encode(frames.nv12[i].frame(), false);
    ASSERT_TRUE(unit);
    auto pics = decoder.decode(*unit);
    ASSERT_EQ(pics.size(), 1u);
    const Frame out = testing::asFrame(*pics[0]);
    const Frame& ref = frames.i420[i].frame();  // the same camera frame as I420
    EXPECT_GE(testing::psnr(ref.data[0], ref.pitch[0], out.data[0], out.pitch[0], kW, kH), 30.0);
    EXPECT_GE(testing::psnr(ref.data[1], ref.pitch[1], out.data[1], out.pitch[1], kW / 2, kH / 2), 30.0);
    EXPECT_GE(testing::psnr(ref.data[2], ref.pitch[2], out.data[2], out.pitch[2], kW / 2, kH / 2), 30.0);
  }
}

TEST(X264Encoder, SignalsColourRangeAndMatrixInTheStream) {
  auto cfg = config640();
  cfg.color = ColorDesc{ColorMatrix::kBt601, ColorRange::kFull};  // what the MJPEG decoder delivers
  auto enc = makeEncoder(cfg);
  testing::H264TestDecoder decoder;
  auto pics = decoder.decode(*enc->encode(cameraFrames().i420[0].frame(), false));
  ASSERT_EQ(pics.size(), 1u);
  EXPECT_EQ(pics[0]->color_range, AVCOL_RANGE_JPEG);
  EXPECT_EQ(pics[0]->colorspace, AVCOL_SPC_SMPTE170M);

  cfg.color = ColorDesc{ColorMatrix::kBt709, ColorRange::kLimited};
  auto enc709 = makeEncoder(cfg);
  testing::H264TestDecoder decoder709;
  pics = decoder709.decode(*enc709->encode(cameraFrames().i420[0].frame(), false));
  ASSERT_EQ(pics.size(), 1u);
  EXPECT_EQ(pics[0]->color_range, AVCOL_RANGE_MPEG);
  EXPECT_EQ(pics[0]->colorspace, AVCOL_SPC_BT709);
}

void expectError(const std::function<void()>& fn, Errc code, const char* needle) {
  try {
    fn();
    ADD_FAILURE() << "no error; expected " << errcName(code) << " mentioning '" << needle << "'";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), code) << e.what();
    EXPECT_NE(std::string(e.what()).find(needle), std::string::npos) << e.what();
  }
}

TEST(X264Encoder, RefusesFramesItWasNotOpenedFor) {
  auto enc = makeEncoder(config640());
  const auto& frames = cameraFrames();
  expectError([&] { enc->encode(frames.nv12[0].frame(), false); }, Errc::kInvalidArgument, "nv12");
  TestImage other(PixelFormat::kI420, 320, 180);
  expectError([&] { enc->encode(other.frame(), false); }, Errc::kInvalidArgument, "320x180");
  Frame device = frames.i420[0].frame();
  device.memory = MemoryKind::kDevice;
  expectError([&] { enc->encode(device, false); }, Errc::kInvalidArgument, "GPU memory");
  Frame noPlane = frames.i420[0].frame();
  noPlane.data[1] = nullptr;
  expectError([&] { enc->encode(noPlane, false); }, Errc::kInvalidArgument, "plane 1");
  expectError([&] { enc->setBitrate(0); }, Errc::kInvalidArgument, "bitrate 0");
  expectError([&] { enc->setBitrate(30000); }, Errc::kInvalidArgument, "level 3.1");
  // The encoder still works after refusing all that.
  auto unit = enc->encode(frames.i420[0].frame(), false);
  ASSERT_TRUE(unit);
  EXPECT_TRUE(unit->keyframe);
  EXPECT_EQ(enc->stats().framesIn, 1u);
}

}  // namespace
}  // namespace zerohop
