// A passed-through camera's pictures (PassthroughPictures, label unit): the test camera's frames (each with
// its pixel timecode) encoded by x264 with an IDR every 30, offered one unit at a time as the encode thread
// offers what it sent. Nothing is decoded while nothing wants pictures; a start in the middle of a GOP hands
// on that very unit's picture (the units since the IDR decoded first to catch up: no wait for the next IDR);
// each picture is its unit's (timecode read back from the decoded pixels, times kept, convert stamped) and
// goes into the frame share; a unit not sent stops the pictures until the next IDR.
// Built twice from this file: label unit with the CPU's decoder (libavcodec into host I420), label gpu
// with NVDEC's (ZEROHOP_PICTURES_ON_GPU: NV12 in VRAM, into a device share; the timecodes read from
// hostPicture()'s download), which skips saying why where NVDEC cannot be used.
#include "passthrough_pictures.hpp"

#include <gtest/gtest.h>
#include <unistd.h>

#include <chrono>
#include <condition_variable>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "convert/converter.hpp"
#include "cpu_passthrough_decoder.hpp"
#include "gpupath/gpu_path.hpp"
#include "test_image.hpp"
#include "zerohop/clock.hpp"
#include "zerohop/encoder.hpp"
#include "zerohop/error.hpp"
#include "zerohop/share.hpp"
#include "zerohop/source.hpp"
#include "zerohop/timecode.hpp"

namespace zerohop {
namespace {

using namespace std::chrono_literals;
using testing::TestImage;

constexpr std::uint32_t kW = 320, kH = 240;
#ifdef ZEROHOP_PICTURES_ON_GPU
#define PICTURES NvdecPassthroughPictures
constexpr int kDevice = 0;
constexpr MemoryKind kPictureMemory = MemoryKind::kDevice;
#else
#define PICTURES PassthroughPictures
constexpr MemoryKind kPictureMemory = MemoryKind::kHost;
#endif
constexpr std::size_t kUnits = 60;  // IDRs at 0 and 30

/// kUnits test-camera frames encoded by x264 (an IDR every 30), made once per process.
const std::vector<EncodedUnitPtr>& cameraUnits() {
  static const std::vector<EncodedUnitPtr> units = [] {
    auto camera = openSource(parseSourceSpec("test:320x240@120"));
    auto converter = makeCpuConverter();
    EncoderConfig c;
    c.encoder = "x264";
    c.width = kW;
    c.height = kH;
    c.fps = 30;
    c.bitrateKbps = 600;
    c.keyframeIntervalFrames = 30;
    c.inputFormat = PixelFormat::kI420;
    auto encoder = makeEncoder(c);
    TestImage i420(PixelFormat::kI420, kW, kH);
    std::vector<EncodedUnitPtr> out;
    while (out.size() < kUnits) {
      auto lease = camera->next(1000ms);
      if (!lease) continue;
      converter->convert(lease->frame(), i420.frame());
      i420.frame().sequence = lease->frame().sequence;
      i420.frame().wallClockMs = lease->frame().wallClockMs;
      i420.frame().times = lease->frame().times;
      EncodedUnitPtr unit = encoder->encode(i420.frame(), false);
      if (!unit) continue;
      auto u = std::make_shared<EncodedUnit>(*unit);
      u->sequence = lease->frame().sequence;
      u->wallClockMs = lease->frame().wallClockMs;
      u->times = lease->frame().times;
      out.push_back(std::move(u));
    }
    return out;
  }();
  return units;
}

SourceInfo cameraInfo() {
  SourceInfo info;
  info.description = "test H.264 camera";
  info.format = PixelFormat::kH264;
  info.width = kW;
  info.height = kH;
  info.fps = 30;
  return info;
}

PassthroughPictures::DecoderFactory decoders(Publisher* share) {
#ifdef ZEROHOP_PICTURES_ON_GPU
  return [share] { return gpupath::makeNvdecPassthroughDecoder(kDevice, kW, kH, share); };
#else
  return [share] { return makeCpuPassthroughDecoder(cameraInfo(), share); };
#endif
}

/// The frame share the decoder writes into: host I420, or on the GPU device NV12.
SlotLayout shareLayout() {
#ifdef ZEROHOP_PICTURES_ON_GPU
  return SlotLayout::deviceImages(GpuFramePath::deviceLayout(kW, kH), 8, kDevice);
#else
  return SlotLayout::images(computeLayout(PixelFormat::kI420, kW, kH, 64), 8);
#endif
}

/// Skips the test, saying why, where the decoder cannot be made (NVDEC without a device).
#define ZEROHOP_REQUIRE_DECODER()                                                 \
  do {                                                                            \
    try {                                                                         \
      decoders(nullptr)();                                                        \
    } catch (const Error& e) {                                                    \
      GTEST_SKIP() << "no decoder for passthrough's pictures here: " << e.what(); \
    }                                                                             \
  } while (0)

/// Offers units one at a time and waits for the pictures thread to have handled each, recording what
/// `picture` got: the timecode read back from it, or nothing.
class Feeder {
 public:
  explicit Feeder(Publisher* share = nullptr) {
    PassthroughPictures::Hooks hooks;
    hooks.wanted = [this] {
      std::lock_guard lock(mutex_);
      return wanted_;
    };
    hooks.picture = [this](const Frame* picture) {
      std::optional<Timecode> tc;
      if (picture) {
        EXPECT_EQ(picture->memory, kPictureMemory);
        const Frame* host = pictures_->hostPicture();
        EXPECT_TRUE(host && host->memory != MemoryKind::kDevice) << "no host copy of the picture";
        if (host) tc = readTimecode(*host);
        EXPECT_TRUE(tc) << "a picture whose timecode does not read back";
        EXPECT_GT(picture->times.at(Stage::kConvert), 0) << "the decode's end is stamped as convert";
      }
      std::unique_lock lock(mutex_);
      entered_ = true;
      cv_.notify_all();
      cv_.wait(lock, [&] { return !held_; });  // hold(): a decode slower than the camera
      got_.push_back(tc);
      cv_.notify_all();
    };
    pictures_ = std::make_unique<PassthroughPictures>(cameraInfo(), share, decoders(share), std::move(hooks));
  }

  /// What the picture hook got for this unit (nullopt: no picture).
  std::optional<Timecode> offer(EncodedUnitPtr unit, bool wanted) {
    std::unique_lock lock(mutex_);
    wanted_ = wanted;
    const std::size_t before = got_.size();
    lock.unlock();
    pictures_->offer(std::move(unit));
    lock.lock();
    EXPECT_TRUE(cv_.wait_for(lock, 10s, [&] { return got_.size() > before; }))
        << "the pictures thread never answered";
    return got_.size() > before ? got_.back() : std::nullopt;
  }
  PassthroughDecodeStatus status() const { return pictures_->status(); }

  /// The picture hook stalls the pictures thread, once it is next called, until release().
  void hold(bool wanted) {
    std::lock_guard lock(mutex_);
    held_ = true;
    entered_ = false;
    wanted_ = wanted;
  }
  /// Offers a unit without waiting for it to be handled; `entered`: first wait until the thread stalls.
  void offerNoWait(EncodedUnitPtr unit, bool entered = false) {
    if (entered) {
      std::unique_lock lock(mutex_);
      EXPECT_TRUE(cv_.wait_for(lock, 10s, [&] { return entered_; })) << "the pictures thread never stalled";
    }
    pictures_->offer(std::move(unit));
  }
  /// Lets the thread go on and waits until the hook was called `calls` times in all; what it got.
  std::vector<std::optional<Timecode>> release(std::size_t calls) {
    std::unique_lock lock(mutex_);
    held_ = false;
    cv_.notify_all();
    EXPECT_TRUE(cv_.wait_for(lock, 20s, [&] { return got_.size() >= calls; })) << got_.size() << " calls";
    return got_;
  }

 private:
  std::mutex mutex_;
  std::condition_variable cv_;
  bool held_ = false;
  bool entered_ = false;
  bool wanted_ = false;
  std::vector<std::optional<Timecode>> got_;
  std::unique_ptr<PassthroughPictures> pictures_;
};

std::uint32_t timecodeSequence(const EncodedUnitPtr& unit) {
  return static_cast<std::uint32_t>(unit->sequence) & kTimecodeSeqMask;
}

TEST(PICTURES, NothingIsDecodedWhileNothingWantsPictures) {
  ZEROHOP_REQUIRE_DECODER();
  const auto& units = cameraUnits();
  ASSERT_TRUE(units[0]->keyframe && units[30]->keyframe && !units[10]->keyframe);
  Feeder feeder;
  for (std::size_t i = 0; i < 20; ++i) EXPECT_FALSE(feeder.offer(units[i], false)) << "unit " << i;
  PassthroughDecodeStatus s = feeder.status();
  EXPECT_TRUE(s.available);
  EXPECT_FALSE(s.running);
  EXPECT_EQ(s.pictures + s.caughtUpUnits + s.starts, 0u) << "decoded with nothing wanting pictures";
  for (std::size_t i = 20; i < 25; ++i) EXPECT_TRUE(feeder.offer(units[i], true)) << "unit " << i;
  EXPECT_TRUE(feeder.status().running);
  for (std::size_t i = 25; i < 30; ++i) EXPECT_FALSE(feeder.offer(units[i], false)) << "unit " << i;
  s = feeder.status();
  EXPECT_FALSE(s.running) << "still decoding once nothing wants pictures";
  EXPECT_EQ(s.pictures, 5u);
}

TEST(PICTURES, AStartMidGopHandsOnThatUnitsPictureAtOnceAndSharesIt) {
  ZEROHOP_REQUIRE_DECODER();
  const auto& units = cameraUnits();
  const std::string name = "zh-pictures-" + std::to_string(::getpid());
  Publisher share(name, shareLayout());
  Feeder feeder(&share);
  for (std::size_t i = 0; i < 10; ++i) ASSERT_FALSE(feeder.offer(units[i], false));
  // A reader attaches: the share's readers want pictures without any hook saying so.
  Subscriber reader(name);
  const std::int64_t deadline = monotonicNs() + 5'000'000'000;
  while (share.stats().readersConnected == 0 && monotonicNs() < deadline) std::this_thread::sleep_for(1ms);
  ASSERT_EQ(share.stats().readersConnected, 1u);
  for (std::size_t i = 10; i < kUnits; ++i) {
    const auto tc = feeder.offer(units[i], false);
    ASSERT_TRUE(tc) << "no picture for unit " << i;
    EXPECT_EQ(tc->sequence, timecodeSequence(units[i])) << "unit " << i << " got another unit's picture";
    auto f = reader.next(2s);
    ASSERT_TRUE(f) << "the share got no picture of unit " << i;
    EXPECT_EQ(f->frame().sequence, units[i]->sequence);
    EXPECT_EQ(f->frame().captureNs(), units[i]->times.at(Stage::kCapture));
    EXPECT_EQ(f->frame().memory, kPictureMemory);
    if (f->frame().memory == MemoryKind::kHost) {  // the device share's pixels: the hook read them back
      EXPECT_EQ(f->frame().format, PixelFormat::kI420);
      const auto shared = readTimecode(f->frame());
      ASSERT_TRUE(shared) << "unit " << i;
      EXPECT_EQ(shared->sequence, timecodeSequence(units[i]));
    }
    EXPECT_TRUE(f->valid());
  }
  const PassthroughDecodeStatus s = feeder.status();
  EXPECT_EQ(s.starts, 1u);
  EXPECT_EQ(s.caughtUpUnits, 10u) << "units 0-9 (IDR at 0) bring the decoder to unit 10";
  EXPECT_EQ(s.pictures, kUnits - 10);
  EXPECT_EQ(s.errors + s.behind, 0u);
  EXPECT_GT(s.decodeMsP50, 0);
}

TEST(PICTURES, AUnitNotSentStopsThePicturesUntilTheNextIdr) {
  ZEROHOP_REQUIRE_DECODER();
  const auto& units = cameraUnits();
  Feeder feeder;
  for (std::size_t i = 0; i < kUnits; ++i) {
    const bool held = i == 15;  // the encode thread sent nothing for this camera frame
    const auto tc = feeder.offer(held ? nullptr : units[i], true);
    if (i < 15 || i >= 30) {
      ASSERT_TRUE(tc) << "no picture for unit " << i;
      EXPECT_EQ(tc->sequence, timecodeSequence(units[i]));
    } else {
      EXPECT_FALSE(tc) << "unit " << i << " refers to the unit not sent: no picture until the IDR at 30";
    }
  }
  const PassthroughDecodeStatus s = feeder.status();
  EXPECT_EQ(s.starts, 2u);
  EXPECT_EQ(s.pictures, 15u + 30u);
}

// The pictures thread falls behind the camera (its hook stalls while 100 more units come; 90 wait at most):
// the oldest queued go, the gap is counted once as `behind`, and the pictures stop until the next IDR, from
// which each is its own unit's again. The passthrough (the offers) never waited.
TEST(PICTURES, ADecodeSlowerThanTheCameraWaitsForTheNextIdrAndCountsIt) {
  ZEROHOP_REQUIRE_DECODER();
  const auto& units = cameraUnits();
  Feeder feeder;
  feeder.hold(true);
  feeder.offerNoWait(units[0]);
  const std::int64_t start = monotonicNs();
  for (std::size_t k = 0; k < 100; ++k) feeder.offerNoWait(units[(1 + k) % kUnits], k == 0);
  EXPECT_LT(monotonicNs() - start, 2'000'000'000) << "offering waited on the stalled pictures thread";
  // Unit 0, then the 90 newest: items k = 10..99, units 11..59 and 0..40.
  const auto got = feeder.release(91);
  ASSERT_EQ(got.size(), 91u);
  ASSERT_TRUE(got[0]) << "unit 0 (an IDR) has its picture";
  for (std::size_t k = 10; k < 100; ++k) {
    const std::size_t index = (1 + k) % kUnits;
    const auto& tc = got[k - 9];
    if (k < 29) {
      EXPECT_FALSE(tc) << "unit " << index << " after the gap: no picture before the IDR at 30";
    } else {
      ASSERT_TRUE(tc) << "no picture for unit " << index << " (from the IDR at 30 on)";
      EXPECT_EQ(tc->sequence, timecodeSequence(units[index]));
    }
  }
  const PassthroughDecodeStatus s = feeder.status();
  EXPECT_EQ(s.behind, 1u);
  EXPECT_EQ(s.starts, 2u);
}

}  // namespace
}  // namespace zerohop
