// The lower rungs of the ladder of renditions on the CPU path (label unit): libyuv's box scale of the
// frame rung 0 took (byte for byte what I420Scale makes, sequence and clock kept), and RenditionEncodes,
// which encodes a rung (x264, starting with an IDR at the rung's size, marked with its rung) only while a
// sink wants it, follows the rung's target, forces a keyframe when its own rung is asked for one (not another
// rung's), and stops when no sink wants it. Beside NVENC (the GPU path) a rung whose NVENC session does not
// open is encoded by x264 instead and says why (here no NVENC opens: the fallback runs). With VP8 rungs, a
// rung is also encoded by libvpx for VP8 receivers from the same scaled picture, each codec's encode only
// while wanted, each forced only by its own requests.
#include "rendition_encodes.hpp"

#include <gtest/gtest.h>
#include <libyuv.h>

#include <cstring>
#include <mutex>
#include <string>
#include <vector>

#include "test_image.hpp"
#include "zerohop/error.hpp"
#include "zerohop/log.hpp"
#include "zerohop/nvenc.hpp"

namespace zerohop {
namespace {

using testing::TestImage;

TestImage i420Frame(std::uint32_t w, std::uint32_t h, std::uint32_t seed) {
  TestImage src(PixelFormat::kI420, w, h, /*extraPitch=*/13);  // odd pitches: a pitch bug shows
  src.fillRandom(seed);
  src.frame().sequence = 7 + seed;
  src.frame().wallClockMs = 1'700'000'000'000;
  return src;
}

// Rung 0's settings the rungs are made from: x264 at 320x240.
EncoderConfig rung0Config() {
  EncoderConfig config;
  config.encoder = "x264";
  config.width = 320;
  config.height = 240;
  return config;
}

TEST(CpuScaler, HalvesAnI420FrameAsI420ScaleDoesAndKeepsItsClock) {
  const TestImage src = i420Frame(320, 240, 1);
  TestImage out(PixelFormat::kI420, 160, 120, 5);
  TestImage want(PixelFormat::kI420, 160, 120);
  makeCpuScaler()->scale(src.frame(), out.frame());
  const Frame& s = src.frame();
  Frame& w = want.frame();
  ASSERT_EQ(libyuv::I420Scale(s.data[0], s.pitch[0], s.data[1], s.pitch[1], s.data[2], s.pitch[2], 320, 240, w.data[0],
                              w.pitch[0], w.data[1], w.pitch[1], w.data[2], w.pitch[2], 160, 120, libyuv::kFilterBox),
            0);
  for (std::uint32_t p = 0; p < 3; ++p) {
    const std::uint32_t rows = p == 0 ? 120 : 60, cols = p == 0 ? 160 : 80;
    for (std::uint32_t y = 0; y < rows; ++y) {
      ASSERT_EQ(0, std::memcmp(out.frame().data[p] + y * out.frame().pitch[p], w.data[p] + y * w.pitch[p], cols))
          << "plane " << p << " row " << y;
    }
  }
  EXPECT_EQ(out.frame().sequence, 8u);
  EXPECT_EQ(out.frame().wallClockMs, 1'700'000'000'000);
}

TEST(CpuScaler, RefusesAnOddDestinationAndOtherFormats) {
  const TestImage src = i420Frame(320, 240, 2);
  TestImage odd(PixelFormat::kI420, 161, 120);
  EXPECT_THROW(makeCpuScaler()->scale(src.frame(), odd.frame()), Error);
  TestImage nv12(PixelFormat::kNV12, 160, 120);
  EXPECT_THROW(makeCpuScaler()->scale(src.frame(), nv12.frame()), Error);
}

TEST(RenditionEncodes, ARungIsEncodedOnlyWhileWantedAndStartsWithAnIdrAtItsSize) {
  bool wanted = false;
  std::uint32_t target = 0;
  std::vector<EncodedUnitPtr> units;
  RenditionEncodes::Demand demand;
  demand.wanted = [&](TrackKey track) { return track == TrackKey{Codec::kH264, 1} && wanted; };
  demand.targetKbps = [&](TrackKey) { return target; };
  demand.deliver = [&](TrackKey track, const EncodedUnitPtr& u) {
    EXPECT_EQ(track.rung, 1u);
    units.push_back(u);
  };
  EncoderConfig config = rung0Config();
  config.keyframeIntervalFrames = 0;  // keyframes only on request
  RenditionEncodes encodes({{320, 240, 300, 1000}, {160, 120, 100, 300}}, config, makeCpuScaler(), demand);
  const TestImage frame = i420Frame(320, 240, 3);

  for (int i = 0; i < 5; ++i) encodes.encode(&frame.frame(), 0u);
  EXPECT_TRUE(units.empty()) << "a rung no sink wants must not be encoded";
  EXPECT_FALSE(encodes.status()[1].running);

  wanted = true;
  target = 200;
  for (int i = 0; i < 5; ++i) encodes.encode(&frame.frame(), 0u);
  ASSERT_EQ(units.size(), 5u);
  EXPECT_TRUE(units[0]->keyframe) << "a rung's first unit is an IDR (SPS/PPS in band)";
  EXPECT_EQ(units[0]->width, 160u);
  EXPECT_EQ(units[0]->height, 120u);
  EXPECT_EQ(units[0]->rendition, 1);
  EXPECT_FALSE(units[1]->keyframe);
  auto st = encodes.status();
  EXPECT_TRUE(st[1].running);
  EXPECT_EQ(st[1].starts, 1u);
  EXPECT_EQ(st[1].units, 5u);
  EXPECT_EQ(st[1].encoderKbps, 200u) << "it opened at its target";

  encodes.encode(&frame.frame(), 1u << 0);
  ASSERT_EQ(units.size(), 6u);
  EXPECT_FALSE(units.back()->keyframe) << "a keyframe request of rung 0 forced one on rung 1";
  EXPECT_EQ(encodes.status()[1].keyframesForced, 0u);

  target = 250;
  encodes.encode(&frame.frame(), 1u << 1);
  EXPECT_TRUE(units.back()->keyframe) << "a keyframe request of rung 1 forces one on it";
  st = encodes.status();
  EXPECT_EQ(st[1].encoderKbps, 250u) << "it follows its target";
  EXPECT_EQ(st[1].keyframesForced, 1u);
  EXPECT_EQ(st[1].keyframes, 2u) << "its first unit and the forced one";

  wanted = false;
  encodes.encode(&frame.frame(), 0u);
  EXPECT_EQ(units.size(), 7u);
  EXPECT_FALSE(encodes.status()[1].running) << "it stops at the first frame no sink wants it for";
}

TEST(RenditionEncodes, ARungWithoutAnNvencSessionIsEncodedByX264AndSaysWhy) {
  if (probeNvenc(0).available) GTEST_SKIP() << "NVENC opens here: the fallback is not reached";
  std::mutex mutex;
  std::vector<std::string> warnings;
  log::setSink([&](log::Level level, std::string_view line) {
    std::lock_guard lock(mutex);
    if (level == log::Level::kWarn) warnings.emplace_back(line);
  });
  std::vector<EncodedUnitPtr> units;
  RenditionEncodes::Demand demand;
  demand.wanted = [](TrackKey track) { return track == TrackKey{Codec::kH264, 1}; };
  demand.targetKbps = [](TrackKey) { return 0u; };
  demand.deliver = [&](TrackKey, const EncodedUnitPtr& u) { units.push_back(u); };
  EncoderConfig config = rung0Config();
  RenditionNvenc nvenc;
  nvenc.gpuDevice = 0;
  nvenc.memory = makeHostAllocator;  // never used: no NVENC session opens
  RenditionEncodes encodes({{320, 240, 300, 1000}, {160, 120, 100, 300}}, config, makeCpuScaler(), demand,
                           makeHostAllocator, nvenc);
  const TestImage frame = i420Frame(320, 240, 4);
  for (int i = 0; i < 3; ++i) encodes.encode(&frame.frame(), 0u);
  log::setSink({});
  ASSERT_EQ(units.size(), 3u) << "the rung's viewers still get it";
  EXPECT_TRUE(units[0]->keyframe);
  EXPECT_EQ(units[0]->width, 160u);
  const auto st = encodes.status();
  EXPECT_EQ(st[1].encoder, "libx264");
  EXPECT_EQ(st[1].starts, 1u);
  std::lock_guard lock(mutex);
  ASSERT_EQ(warnings.size(), 1u) << "said once, when the rung opened";
  EXPECT_NE(warnings[0].find("rendition 1 (160x120): no NVENC session"), std::string::npos) << warnings[0];
  EXPECT_NE(warnings[0].find("x264 encodes it"), std::string::npos) << warnings[0];
}

// Counts the scales a RenditionEncodes asks of libyuv's scaler.
class CountingScaler : public FrameScaler {
 public:
  explicit CountingScaler(int& count) : count_(count) {}
  void scale(const Frame& src, Frame& dst) override {
    ++count_;
    inner_->scale(src, dst);
  }

 private:
  int& count_;
  std::unique_ptr<FrameScaler> inner_ = makeCpuScaler();
};

TEST(RenditionEncodes, AVp8RungIsEncodedBesideItsH264FromTheSameScaledPictureEachOnlyWhileWanted) {
  bool h264 = true, vp8 = true;
  std::vector<EncodedUnitPtr> h264Units, vp8Units;
  RenditionEncodes::Demand demand;
  demand.wanted = [&](TrackKey track) {
    return track.rung == 1 && (track.codec == Codec::kVP8 ? vp8 : h264);
  };
  demand.targetKbps = [](TrackKey track) { return track.codec == Codec::kVP8 ? 180u : 220u; };
  demand.deliver = [&](TrackKey track, const EncodedUnitPtr& u) {
    EXPECT_EQ(u->codec, track.codec) << "a unit delivered as another codec's";
    (track.codec == Codec::kVP8 ? vp8Units : h264Units).push_back(u);
  };
  EncoderConfig config = rung0Config();
  config.keyframeIntervalFrames = 0;
  int scales = 0;
  RenditionEncodes encodes({{320, 240, 300, 1000}, {160, 120, 100, 300}}, config,
                           std::make_unique<CountingScaler>(scales), demand, makeHostAllocator,
                           RenditionNvenc{},
                           /*vp8=*/true);
  const TestImage frame = i420Frame(320, 240, 5);
  for (int i = 0; i < 4; ++i) encodes.encode(&frame.frame(), 0u, 0u);
  EXPECT_EQ(scales, 4) << "one scale a frame for the rung's two encodes";
  ASSERT_EQ(vp8Units.size(), 4u);
  ASSERT_EQ(h264Units.size(), 4u);
  EXPECT_EQ(vp8Units[0]->codec, Codec::kVP8);
  EXPECT_TRUE(vp8Units[0]->keyframe) << "a VP8 rung's first frame is a keyframe";
  EXPECT_EQ(vp8Units[0]->width, 160u);
  EXPECT_EQ(vp8Units[0]->height, 120u);
  EXPECT_EQ(vp8Units[0]->rendition, 1);
  EXPECT_EQ(vp8Units[0]->sequence, frame.frame().sequence) << "the scaled frame keeps its sequence";
  EXPECT_FALSE(vp8Units[1]->keyframe);
  const auto vp8Status = encodes.vp8Status();
  ASSERT_EQ(vp8Status.size(), 2u);
  EXPECT_EQ(vp8Status[1].codec, Codec::kVP8);
  EXPECT_TRUE(vp8Status[1].running);
  EXPECT_EQ(vp8Status[1].encoder, "libvpx");
  EXPECT_EQ(vp8Status[1].encoderKbps, 180u) << "the VP8 rung opened at its own target";
  EXPECT_EQ(vp8Status[1].units, 4u);
  EXPECT_EQ(encodes.status()[1].encoderKbps, 220u);

  encodes.encode(&frame.frame(), 0u, 1u << 1);
  EXPECT_TRUE(vp8Units.back()->keyframe) << "a keyframe request of VP8 rung 1 forces one on it";
  EXPECT_FALSE(h264Units.back()->keyframe) << "VP8 rung 1's request forced an IDR on H.264 rung 1";
  EXPECT_EQ(encodes.vp8Status()[1].keyframesForced, 1u);
  EXPECT_EQ(encodes.status()[1].keyframesForced, 0u);

  vp8 = false;
  encodes.encode(&frame.frame(), 0u, 0u);
  EXPECT_EQ(vp8Units.size(), 5u);
  EXPECT_EQ(h264Units.size(), 6u);
  EXPECT_FALSE(encodes.vp8Status()[1].running) << "the VP8 rung stops with its last viewer";
  EXPECT_TRUE(encodes.status()[1].running) << "the H.264 rung goes on";

  h264 = false;
  vp8 = true;
  encodes.encode(&frame.frame(), 0u, 0u);
  ASSERT_EQ(vp8Units.size(), 6u);
  EXPECT_TRUE(vp8Units.back()->keyframe) << "a VP8 rung started again begins with a keyframe";
  EXPECT_EQ(scales, 7);
}

TEST(RenditionEncodes, WithoutVp8RungsAVp8RequestIsNotEncoded) {
  std::vector<EncodedUnitPtr> units;
  RenditionEncodes::Demand demand;
  demand.wanted = [](TrackKey track) { return track.rung == 1; };
  demand.targetKbps = [](TrackKey) { return 0u; };
  demand.deliver = [&](TrackKey, const EncodedUnitPtr& u) { units.push_back(u); };
  EncoderConfig config = rung0Config();
  RenditionEncodes encodes({{320, 240, 300, 1000}, {160, 120, 100, 300}}, config, makeCpuScaler(), demand);
  const TestImage frame = i420Frame(320, 240, 6);
  encodes.encode(&frame.frame(), 0u, ~0u);
  ASSERT_EQ(units.size(), 1u);
  EXPECT_EQ(units[0]->codec, Codec::kH264);
  EXPECT_TRUE(encodes.vp8Status().empty());
}

}  // namespace
}  // namespace zerohop
