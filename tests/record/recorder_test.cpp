// The recorder library: file names, keyframe start, capture-time stamps, rotation, discontinuities,
// on real H.264 from libx264 (zerohop::makeEncoder), checked with ffprobe.
#include "record/recorder.hpp"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cstring>
#include <filesystem>

#include "ffprobe.hpp"
#include "x264_test_units.hpp"
#include "zerohop/encoder.hpp"
#include "zerohop/error.hpp"

namespace zerohop::record {
namespace {

namespace fs = std::filesystem;
using testing::probeFile;

std::vector<EncodedUnitPtr> encodeUnits(int count, std::uint32_t keyint) {
  return testing::encodeX264Units(count, keyint);
}

RecordUnit toRecord(const EncodedUnit& u) {
  return RecordUnit{u.bytes.data(), u.bytes.size(), u.keyframe, u.times.at(Stage::kCapture),
                    u.wallClockMs,  u.width,        u.height};
}

class RecorderTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!testing::haveFfprobe()) GTEST_SKIP() << "ffprobe is not on PATH (Debian: apt install ffmpeg)";
    dir_ = fs::temp_directory_path() / ("zerohop-record-test-" + std::to_string(getpid()));
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  std::string path(const std::string& name) const { return (dir_ / name).string(); }
  fs::path dir_;
};

TEST(RecorderNames, SegmentIndexGoesBeforeTheExtension) {
  EXPECT_EQ(segmentPath("/tmp/a.b/out.mp4", 3), "/tmp/a.b/out-0003.mp4");
  EXPECT_EQ(segmentPath("rec.mkv", 12345), "rec-12345.mkv");
  EXPECT_EQ(segmentPath("dir.x/noext", 0), "dir.x/noext-0000");
  EXPECT_EQ(containerForPath("A.MP4"), Container::kMp4);
  EXPECT_EQ(containerForPath("a.mkv"), Container::kMatroska);
  EXPECT_THROW(containerForPath("a.avi"), Error);
  EXPECT_THROW(Recorder(RecorderOptions{"out.webm"}), Error);
}

TEST_F(RecorderTest, StartsAtTheFirstKeyframeWithCaptureTimestamps) {
  const auto units = encodeUnits(75, 15);
  for (const std::string ext : {"mp4", "mkv"}) {
    SCOPED_TRACE(ext);
    Recorder rec({path("start." + ext)});
    for (std::size_t i = 5; i < units.size(); ++i) rec.write(toRecord(*units[i]));  // from a P-frame on
    const auto s = rec.stats();
    EXPECT_EQ(s.waitedForKeyframe, 10u);  // frames 5..14: before the IDR at 15
    EXPECT_EQ(s.units, 60u);
    EXPECT_EQ(s.files, 1u);
    EXPECT_NEAR(static_cast<double>(s.recordedNs) / 1e9, 2.0, 0.01);
    rec.finish();
    const auto p = probeFile(path("start." + ext));
    ASSERT_TRUE(p.ok) << p.error;
    EXPECT_EQ(p.codec, "h264");
    EXPECT_EQ(p.frames, 60);
    EXPECT_TRUE(p.firstIsKeyframe);
    EXPECT_NEAR(p.durationSeconds, 2.0, 0.1);
    EXPECT_NEAR(p.frameRate, 30.0, 0.5);
  }
}

TEST_F(RecorderTest, RotatesAtTheFirstKeyframePastTheDuration) {
  const auto units = encodeUnits(90, 15);
  {
    Recorder rec({path("seg.mp4"), 1.0, 0});
    for (const auto& u : units) rec.write(toRecord(*u));
    EXPECT_EQ(rec.stats().files, 3u);
  }
  EXPECT_FALSE(fs::exists(path("seg.mp4")));
  for (int i = 0; i < 3; ++i) {
    const auto p = probeFile(segmentPath(path("seg.mp4"), static_cast<std::uint32_t>(i)));
    ASSERT_TRUE(p.ok) << i << ": " << p.error;
    EXPECT_EQ(p.frames, 30) << i;
    EXPECT_TRUE(p.firstIsKeyframe) << i;
    EXPECT_NEAR(p.durationSeconds, 1.0, 0.1) << i;
  }
}

TEST_F(RecorderTest, RotatesBySize) {
  const auto units = encodeUnits(60, 15);
  Recorder rec({path("size.mkv"), 0, 1});  // full after any byte: a file per GOP
  for (const auto& u : units) rec.write(toRecord(*u));
  rec.finish();
  EXPECT_EQ(rec.stats().files, 4u);
  for (std::uint32_t i = 0; i < 4; ++i) {
    const auto p = probeFile(segmentPath(path("size.mkv"), i));
    ASSERT_TRUE(p.ok) << i << ": " << p.error;
    EXPECT_EQ(p.frames, 15) << i;
  }
}

TEST_F(RecorderTest, ADiscontinuityWaitsForTheNextKeyframe) {
  const auto units = encodeUnits(45, 15);
  Recorder rec({path("gap.mp4")});
  for (int i = 0; i < 20; ++i) rec.write(toRecord(*units[static_cast<std::size_t>(i)]));
  rec.discontinuity();  // units 20..22 lost
  for (int i = 23; i < 45; ++i) rec.write(toRecord(*units[static_cast<std::size_t>(i)]));
  rec.finish();
  const auto s = rec.stats();
  EXPECT_EQ(s.discontinuities, 1u);
  EXPECT_EQ(s.waitedForKeyframe, 7u);  // 23..29
  EXPECT_EQ(s.units, 20u + 15u);
  const auto p = probeFile(path("gap.mp4"));
  ASSERT_TRUE(p.ok) << p.error;
  EXPECT_EQ(p.frames, 35);
  // The gap stays a gap in time: capture timestamps, not frame counting.
  EXPECT_NEAR(p.durationSeconds, 1.5, 0.1);
}

// A 20 ms mono CELT packet (TOC config 31, code 0) and a few bytes: what the muxers store, unread.
RecordAudio opusAt(std::int64_t captureNs) {
  static const std::uint8_t kPacket[] = {0xf8, 0xff, 0xfe, 0x01, 0x02};
  return RecordAudio{kPacket, sizeof kPacket, captureNs};
}
constexpr std::int64_t kPacketNs = 20'000'000;

TEST(OpusPacketSamples, ReadsTheDurationFromTheToc) {
  const std::uint8_t celt20[] = {0xf8};        // config 31: CELT 20 ms, one frame
  const std::uint8_t silk10[] = {0x00};        // config 0: SILK 10 ms
  const std::uint8_t hybrid20x2[] = {0x79};    // config 15 (hybrid 20 ms), code 1: two frames
  const std::uint8_t celt2_5x3[] = {0x83, 3};  // config 16 (CELT 2.5 ms), code 3: three frames
  const std::uint8_t silk60x3[] = {0x1b, 3};   // config 3 (SILK 60 ms) x 3 = 180 ms: too long
  const std::uint8_t code3Short[] = {0xfb};    // code 3 without its frame count
  EXPECT_EQ(opusPacketSamples(celt20, 1), 960u);
  EXPECT_EQ(opusPacketSamples(silk10, 1), 480u);
  EXPECT_EQ(opusPacketSamples(hybrid20x2, 1), 1920u);
  EXPECT_EQ(opusPacketSamples(celt2_5x3, 2), 360u);
  EXPECT_EQ(opusPacketSamples(silk60x3, 2), 0u);
  EXPECT_EQ(opusPacketSamples(code3Short, 1), 0u);
  EXPECT_EQ(opusPacketSamples(nullptr, 0), 0u);
}

// The sound of three seconds, 100 ms ahead of the pictures as a reader sees it, rotated every second:
// each file's sound starts with its first picture and the packets before the first keyframe are left out.
TEST_F(RecorderTest, SoundStartsWithEachFilesFirstPictureAndSplitsAtItsKeyframe) {
  const auto units = encodeUnits(90, 15);  // 1.0 s .. 4.0 s of capture time
  for (const std::string ext : {"mp4", "mkv"}) {
    SCOPED_TRACE(ext);
    RecorderOptions o{path("av." + ext), 1.0, 0};
    o.sound = true;
    Recorder rec(o);
    std::int64_t nextAudioNs = 900'000'000;  // 100 ms of sound before the first picture
    for (const auto& u : units) {
      const auto unit = toRecord(*u);
      for (; nextAudioNs <= unit.captureNs + 100'000'000; nextAudioNs += kPacketNs) rec.writeAudio(opusAt(nextAudioNs));
      rec.write(unit);
    }
    rec.finish();
    const auto s = rec.stats();
    EXPECT_EQ(s.files, 3u);
    EXPECT_EQ(s.audioDropped, 5u);    // 0.90 .. 0.98 s: before the first picture
    EXPECT_EQ(s.audioPackets, 150u);  // 1.00 .. 3.98 s: the span of the pictures
    for (std::uint32_t i = 0; i < 3; ++i) {
      const std::string file = segmentPath(path("av." + ext), i);
      const auto a = testing::probeAudio(file);
      ASSERT_TRUE(a.ok) << i << ": " << a.error;
      EXPECT_EQ(a.codec, "opus") << i;
      EXPECT_EQ(a.channels, 1) << i;
      EXPECT_EQ(a.packets, 50) << i;
      EXPECT_NEAR(a.startSeconds, 0.0, 0.021) << i;
      EXPECT_EQ(probeFile(file).frames, 30) << i;
    }
  }
}

TEST_F(RecorderTest, AStalledPictureHoldsTheSoundBackAtMostASecond) {
  const auto units = encodeUnits(30, 15);  // 1.0 s .. 2.0 s, then the camera stalls
  Recorder rec({path("stall.mkv"), 0, 0, true});
  std::int64_t nextAudioNs = 1'000'000'000;
  for (const auto& u : units) {
    const auto unit = toRecord(*u);
    for (; nextAudioNs <= unit.captureNs; nextAudioNs += kPacketNs) rec.writeAudio(opusAt(nextAudioNs));
    rec.write(unit);
  }
  for (; nextAudioNs < 4'000'000'000; nextAudioNs += kPacketNs) rec.writeAudio(opusAt(nextAudioNs));
  // Written: every packet more than a second older than the newest (3.98 s): 1.00 .. 2.96 s.
  EXPECT_EQ(rec.stats().audioPackets, 99u);
  rec.writeAudio(RecordAudio{nullptr, 0, nextAudioNs});  // unreadable: counted, not written
  EXPECT_EQ(rec.stats().audioDropped, 1u);
  rec.finish();
  const auto a = testing::probeAudio(path("stall.mkv"));
  ASSERT_TRUE(a.ok) << a.error;
  EXPECT_EQ(a.packets, 99);
  EXPECT_EQ(probeFile(path("stall.mkv")).frames, 30);
}

}  // namespace
}  // namespace zerohop::record
