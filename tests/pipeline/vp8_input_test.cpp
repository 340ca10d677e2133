// The VP8 encode's input (label unit): the GPU path's NV12 host copy becomes the I420 frame libvpx
// takes, byte for byte what libyuv's NV12ToI420 makes of it (and what de-interleaving the chroma by
// hand makes), with the frame's sequence, clock, colour and stage times; the CPU path's I420 frame is
// copied exactly; and Vp8Encode, fed NV12 frames, delivers VP8 units for them and follows its bitrate target.
#include "vp8_input.hpp"

#include <gtest/gtest.h>
#include <libyuv.h>

#include <chrono>
#include <condition_variable>
#include <mutex>
#include <thread>
#include <vector>

#include "test_image.hpp"
#include "vp8_encode.hpp"
#include "zerohop/error.hpp"

namespace zerohop {
namespace {

using testing::TestImage;
using namespace std::chrono_literals;

TestImage nv12Frame(std::uint32_t w, std::uint32_t h, std::uint32_t seed) {
  TestImage src(PixelFormat::kNV12, w, h, /*extraPitch=*/13);  // odd pitches: a pitch bug shows
  src.fillRandom(seed);
  Frame& f = src.frame();
  f.memory = MemoryKind::kPinned;  // as GpuFramePath's download
  f.sequence = 41 + seed;
  f.wallClockMs = 1'700'000'000'000;
  f.color = ColorDesc{ColorMatrix::kBt709, ColorRange::kLimited};
  f.times.mark(Stage::kCapture, 1000);
  f.times.mark(Stage::kIngest, 2000);
  f.times.mark(Stage::kConvert, 3000);
  return src;
}

::testing::AssertionResult samePlane(const TestImage& a, const TestImage& b, std::uint32_t p) {
  const std::uint32_t rows = testing::planeRows(PixelFormat::kI420, p, a.frame().height);
  const std::uint32_t bytes = testing::planeRowBytes(PixelFormat::kI420, p, a.frame().width);
  for (std::uint32_t y = 0; y < rows; ++y) {
    for (std::uint32_t x = 0; x < bytes; ++x) {
      if (a.at(p, x, y) != b.at(p, x, y)) {
        return ::testing::AssertionFailure() << "plane " << p << " (" << x << "," << y
                                             << "): " << int(a.at(p, x, y)) << " vs " << int(b.at(p, x, y));
      }
    }
  }
  return ::testing::AssertionSuccess();
}

TEST(Vp8Input, Nv12HostCopyBecomesI420ByteExactAgainstLibyuv) {
  constexpr std::uint32_t w = 320, h = 180;
  const TestImage src = nv12Frame(w, h, 1);
  TestImage got(PixelFormat::kI420, w, h, 7);  // a pool slot's pitches differ from the source's
  got.poison();
  Vp8Input input;
  input.fill(src.frame(), got.frame());

  TestImage want(PixelFormat::kI420, w, h, 3);
  const Frame& s = src.frame();
  Frame& d = want.frame();
  ASSERT_EQ(
      libyuv::NV12ToI420(s.data[0], int(s.pitch[0]), s.data[1], int(s.pitch[1]), d.data[0], int(d.pitch[0]),
                         d.data[1], int(d.pitch[1]), d.data[2], int(d.pitch[2]), int(w), int(h)),
      0);
  for (std::uint32_t p = 0; p < 3; ++p) EXPECT_TRUE(samePlane(got, want, p)) << "against libyuv";

  // Independently: Y as is, U and V the even and odd bytes of each interleaved chroma row.
  for (std::uint32_t y = 0; y < h; ++y)
    for (std::uint32_t x = 0; x < w; ++x)
      ASSERT_EQ(got.at(0, x, y), src.at(0, x, y)) << "Y " << x << "," << y;
  for (std::uint32_t y = 0; y < h / 2; ++y) {
    for (std::uint32_t x = 0; x < w / 2; ++x) {
      ASSERT_EQ(got.at(1, x, y), src.at(1, 2 * x, y)) << "U " << x << "," << y;
      ASSERT_EQ(got.at(2, x, y), src.at(1, 2 * x + 1, y)) << "V " << x << "," << y;
    }
  }
  EXPECT_TRUE(got.paddingIs(0xCD)) << "wrote past a row";

  const Frame& out = got.frame();
  EXPECT_EQ(out.sequence, s.sequence);
  EXPECT_EQ(out.wallClockMs, s.wallClockMs);
  EXPECT_EQ(out.color.matrix, ColorMatrix::kBt709);
  EXPECT_EQ(out.color.range, ColorRange::kLimited);
  for (Stage st : {Stage::kCapture, Stage::kIngest, Stage::kConvert})
    EXPECT_EQ(out.times.at(st), s.times.at(st));
}

TEST(Vp8Input, CpuPathI420IsCopiedExactly) {
  constexpr std::uint32_t w = 64, h = 48;
  TestImage src(PixelFormat::kI420, w, h, 5);
  src.fillRandom(9);
  src.frame().sequence = 7;
  TestImage got(PixelFormat::kI420, w, h, 1);
  Vp8Input input;
  input.fill(src.frame(), got.frame());
  for (std::uint32_t p = 0; p < 3; ++p) EXPECT_TRUE(samePlane(got, src, p));
  EXPECT_EQ(got.frame().sequence, 7u);
}

TEST(Vp8Input, RefusesDeviceFramesAndOtherFormatsWithTheReason) {
  TestImage nv12(PixelFormat::kNV12, 64, 48);
  nv12.frame().memory = MemoryKind::kDevice;
  TestImage yuyv(PixelFormat::kYUYV, 64, 48);
  TestImage dst(PixelFormat::kI420, 64, 48);
  EXPECT_FALSE(Vp8Input::takes(nv12.frame()));
  EXPECT_FALSE(Vp8Input::takes(yuyv.frame()));
  Vp8Input input;
  try {
    input.fill(nv12.frame(), dst.frame());
    ADD_FAILURE() << "a device frame was taken";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("GPU memory"), std::string::npos) << e.what();
  }
  EXPECT_THROW(input.fill(yuyv.frame(), dst.frame()), Error);
}

// A 320x180@30 VP8 encode at `kbps` whose units the test collects (and waits for, under `mutex`).
struct CollectedVp8 {
  static constexpr std::uint32_t w = 320, h = 180;
  std::mutex mutex;
  std::condition_variable changed;
  std::vector<EncodedUnitPtr> units;
  Vp8Encode vp8;

  explicit CollectedVp8(std::uint32_t kbps) : vp8(config(kbps), [this](const EncodedUnitPtr& unit) {
    std::lock_guard lock(mutex);
    units.push_back(unit);
    changed.notify_all();
  }) {}

  static EncoderConfig config(std::uint32_t kbps) {
    EncoderConfig c;
    c.width = w;
    c.height = h;
    c.fps = 30;
    c.bitrateKbps = kbps;
    return c;
  }
};

// The GPU path's hand-off end to end on the CPU: NV12 frames offered while wanted come back as VP8
// units of the same frames, the first a keyframe.
TEST(Vp8Input, Vp8EncodeDeliversUnitsForNv12Frames) {
  CollectedVp8 c(500);
  constexpr std::uint32_t w = CollectedVp8::w, h = CollectedVp8::h;
  auto& [mutex, changed, units, vp8] = c;
  constexpr int kFrames = 5;
  for (int i = 0; i < kFrames; ++i) {
    const TestImage src = nv12Frame(w, h, static_cast<std::uint32_t>(i));
    vp8.offer(&src.frame(), /*wanted=*/true, false);
    std::unique_lock lock(mutex);  // one at a time: the 1-deep queue would drop a frame offered early
    ASSERT_TRUE(changed.wait_for(lock, 10s, [&] { return units.size() == std::size_t(i) + 1; }))
        << "no VP8 unit for NV12 frame " << i << "; status: " << vp8.status().unavailableReason;
  }
  vp8.stop();
  ASSERT_EQ(units.size(), std::size_t{kFrames});
  EXPECT_TRUE(units.front()->keyframe);
  for (int i = 0; i < kFrames; ++i) {
    EXPECT_EQ(units[i]->codec, Codec::kVP8);
    EXPECT_EQ(units[i]->sequence, 41u + static_cast<std::uint64_t>(i));
    EXPECT_FALSE(units[i]->bytes.empty());
  }
  EXPECT_EQ(vp8.status().encoder.framesIn, std::uint64_t{kFrames});
}

// Congestion control's VP8 target: a running encode codes for it from its next frame on, with no
// keyframe; an encode that (re)starts opens at it.
TEST(Vp8Input, Vp8EncodeFollowsItsTargetWithoutAKeyframe) {
  CollectedVp8 c(1500);
  constexpr std::uint32_t w = CollectedVp8::w, h = CollectedVp8::h;
  auto& [mutex, changed, units, vp8] = c;
  const auto encodeOne = [&](int i) {
    const TestImage src = nv12Frame(w, h, static_cast<std::uint32_t>(i));
    const std::size_t before = units.size();
    vp8.offer(&src.frame(), /*wanted=*/true, false);
    std::unique_lock lock(mutex);
    return changed.wait_for(lock, 10s, [&] { return units.size() == before + 1; });
  };
  vp8.setTargetKbps(0);  // none yet: the configured bitrate
  ASSERT_TRUE(encodeOne(0));
  EXPECT_EQ(vp8.status().encoderKbps, 1500u);
  vp8.setTargetKbps(600);
  for (int i = 1; i < 4; ++i) ASSERT_TRUE(encodeOne(i)) << "frame " << i;
  EXPECT_EQ(vp8.status().encoderKbps, 600u);
  EXPECT_EQ(vp8.status().starts, 1u);  // the same encoder: no restart
  for (std::size_t i = 1; i < units.size(); ++i) EXPECT_FALSE(units[i]->keyframe) << "unit " << i;
  EXPECT_EQ(vp8.status().encoder.keyframes, 1u);

  // No sink wants VP8: the encoder closes (within 100 ms); the next one opens at the target.
  vp8.offer(nullptr, /*wanted=*/false, false);
  const auto deadline = std::chrono::steady_clock::now() + 5s;
  while (vp8.status().running && std::chrono::steady_clock::now() < deadline) std::this_thread::sleep_for(10ms);
  ASSERT_FALSE(vp8.status().running);
  EXPECT_EQ(vp8.status().encoderKbps, 0u);
  vp8.setTargetKbps(450);
  ASSERT_TRUE(encodeOne(10));
  EXPECT_EQ(vp8.status().starts, 2u);
  EXPECT_EQ(vp8.status().encoderKbps, 450u);
  EXPECT_NE(vp8.status().encoderName.find("CBR 450 kb/s"), std::string::npos) << vp8.status().encoderName;
  vp8.stop();
}

}  // namespace
}  // namespace zerohop
