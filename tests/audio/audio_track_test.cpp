// AudioTrack: the tone through the capture thread, the queue and the one Opus encode, as serve runs it
// for a camera with sound. Packets come out every 20 ms of sound, stamped on the capture clock 20 ms
// apart, each one Opus packet that libopus decodes to 960 samples; stop() joins both threads. A source's
// own Opus packets (an RTSP camera's) are passed on as they came: the same bytes, their capture instants.
#include "audio/audio_track.hpp"

#include <gtest/gtest.h>
#include <opus/opus.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <mutex>
#include <optional>
#include <thread>
#include <vector>

#include "audio/fec_loss.hpp"
#include "audio/opus_packet.hpp"
#include "audio/tone_source.hpp"
#include "zerohop/clock.hpp"
#include "zerohop/error.hpp"

namespace zerohop::audio {
namespace {

using namespace std::chrono_literals;

TEST(AudioTrack, TheToneBecomesOpusPacketsStampedTwentyMillisecondsApart) {
  std::mutex mutex;
  std::condition_variable arrived;
  std::vector<EncodedUnitPtr> units;
  const std::int64_t startNs = monotonicNs();
  AudioTrack track(openAudioSource("test"), OpusSettings{}, [&](EncodedUnitPtr unit) {
    std::lock_guard lock(mutex);
    units.push_back(std::move(unit));
    arrived.notify_one();
  });
  track.start();
  {
    std::unique_lock lock(mutex);
    ASSERT_TRUE(arrived.wait_for(lock, 10s, [&] { return units.size() >= 25; })) << units.size() << " packets in 10 s";
  }
  track.stop();
  const AudioTrackStats stats = track.stats();
  EXPECT_FALSE(stats.running);
  EXPECT_EQ(stats.source, "test");
  EXPECT_GE(stats.packets, 25u);
  EXPECT_GE(stats.capture.blocks, 50u);
  EXPECT_EQ(stats.failures, 0u);

  std::lock_guard lock(mutex);
  const std::size_t seen = units.size();
  int err = 0;
  OpusDecoder* decoder = opus_decoder_create(48000, 1, &err);
  ASSERT_EQ(err, OPUS_OK);
  std::vector<opus_int16> pcm(5760);
  for (std::size_t i = 0; i < units.size(); ++i) {
    const EncodedUnit& u = *units[i];
    EXPECT_TRUE(u.keyframe) << "every Opus packet decodes alone";
    EXPECT_GE(u.ptsNs, startNs - 50'000'000) << "on the capture clock";
    if (i > 0 && units[i]->sequence == units[i - 1]->sequence + 1) {
      EXPECT_EQ(u.ptsNs - units[i - 1]->ptsNs, 20'000'000) << "packet " << i;
    }
    EXPECT_EQ(opus_decode(decoder, u.bytes.data(), static_cast<opus_int32>(u.bytes.size()), pcm.data(), 5760, 0), 960)
        << "packet " << i;
  }
  opus_decoder_destroy(decoder);
  EXPECT_EQ(units.size(), seen) << "nothing is delivered after stop()";
}

// The listeners' reported loss sets the encoder's in-band FEC, once a second, capped, and back to none.
TEST(AudioTrack, TheInBandFecFollowsTheWorstListenersLoss) {
  std::atomic<double> loss{-1};
  AudioTrack track(openAudioSource("test"), OpusSettings{}, [](EncodedUnitPtr) {});
  track.setLossProbe([&] { return loss.load(); });
  EXPECT_EQ(track.stats().expectedLossPercent, 0u);
  track.start();
  const auto started = std::chrono::steady_clock::now();
  // Reports come once a second, smoothed (fec_loss.hpp: 30 % of the way up per report): 12.4 % passes 8
  // after 3 of them.
  const auto reaches = [&](auto holds) {
    for (auto deadline = std::chrono::steady_clock::now() + 10s;
         std::chrono::steady_clock::now() < deadline;) {
      if (holds(track.stats().expectedLossPercent)) return true;
      std::this_thread::sleep_for(20ms);
    }
    return false;
  };
  loss = 12.4;
  EXPECT_TRUE(reaches([](std::uint32_t p) { return p >= 8 && p <= 12; }))
      << track.stats().expectedLossPercent;
  loss = 55;
  EXPECT_TRUE(reaches([](std::uint32_t p) { return p == AudioTrack::kMaxExpectedLossPercent; }))
      << track.stats().expectedLossPercent;
  loss = -1;  // no listener reports any more
  EXPECT_TRUE(reaches([](std::uint32_t p) { return p == 0; })) << track.stats().expectedLossPercent;
  track.stop();
  // 50 packets a second (20 ms each) while it ran, 80 % of them at least: the sound went on meanwhile.
  // (It once asserted "more than 100": the three changes above take about 2 s, 100 packets exactly.)
  const double ran = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  EXPECT_GE(static_cast<double>(track.stats().packets), 0.8 * 50 * ran) << "in " << ran << " s";
}

TEST(FecLoss, RandomLossThatReadsZeroInManyReportsKeepsTheFecOn) {
  // 5 % random loss as one-window reports read it: mostly 0, sometimes 8 or 16 %.
  const double reports[] = {8, 0, 0, 16, 0, 8, 0, 0, 0, 8, 0, 16, 0, 0, 8, 0, 0, 0, 0, 8};
  double smoothed = 0;
  std::uint32_t lowest = 100, highest = 0;
  for (int i = 0; i < 20; ++i) {
    smoothed = nextFecLoss(smoothed, reports[i]);
    if (i < 1) continue;
    lowest = std::min(lowest, fecLossPercent(smoothed, AudioTrack::kMaxExpectedLossPercent));
    highest = std::max(highest, fecLossPercent(smoothed, AudioTrack::kMaxExpectedLossPercent));
  }
  EXPECT_GE(lowest, 2u) << "a report that read no loss switched the FEC off";
  EXPECT_LE(highest, 9u) << "one window's 16 % set it for far more than the loss";
}

TEST(FecLoss, ItRisesInSecondsFallsOverTenAndStopsAtOnceWithoutListeners) {
  double smoothed = 0;
  for (int i = 0; i < 3; ++i) smoothed = nextFecLoss(smoothed, 10);
  EXPECT_NEAR(smoothed, 6.57, 1e-9);  // 3 s: two thirds of a step
  for (int i = 0; i < 10; ++i) smoothed = nextFecLoss(smoothed, 0);
  EXPECT_GT(smoothed, 2.0);  // 10 s after the loss stopped: a third of it left
  EXPECT_LT(smoothed, 2.5);
  EXPECT_EQ(nextFecLoss(smoothed, -1), 0.0) << "no listener reports: nothing to protect";
  EXPECT_EQ(fecLossPercent(55, AudioTrack::kMaxExpectedLossPercent), AudioTrack::kMaxExpectedLossPercent);
  EXPECT_EQ(fecLossPercent(0.4, 30), 0u);
}

// A source whose sound comes as Opus packets (as RtspAudioSource hands a camera's Opus on): `packets`,
// 10 ms each, then nothing.
class OpusPacketSource final : public AudioSource {
 public:
  explicit OpusPacketSource(std::vector<AudioFrame> packets) : packets_(std::move(packets)) {}
  AudioSourceInfo info() const override { return {"camera opus", 1, 480}; }
  std::optional<AudioFrame> next(std::chrono::milliseconds timeout) override {
    if (given_ == packets_.size()) {
      std::this_thread::sleep_for(timeout);
      return std::nullopt;
    }
    return packets_[given_++];
  }
  AudioSourceCounters counters() const override { return {}; }

 private:
  std::vector<AudioFrame> packets_;
  std::size_t given_ = 0;
};

TEST(AudioTrack, ASourcesOwnOpusPacketsArePassedOnAsTheyCame) {
  // 10 ms packets of the tone (this track's own encode makes 20 ms ones), 10 ms apart on the capture clock.
  OpusSettings tenMs;
  tenMs.frameMs = 10;
  OpusAudioEncoder cameraEncoder(tenMs);
  ToneSource tone;
  std::vector<AudioFrame> packets;
  const std::int64_t startNs = 1'000'000'000;
  while (packets.size() < 30) {
    auto block = tone.next(1s);
    ASSERT_TRUE(block);
    for (OpusPacket& p : cameraEncoder.encode(*block)) {
      AudioFrame frame;
      frame.opusFrames = opusPacketFrames(p.data.data(), p.data.size());
      ASSERT_EQ(frame.opusFrames, 480u);
      frame.opus = std::move(p.data);
      frame.captureNs = startNs + static_cast<std::int64_t>(packets.size()) * 10'000'000;
      frame.sequence = packets.size();
      packets.push_back(std::move(frame));
    }
  }
  std::mutex mutex;
  std::condition_variable arrived;
  std::vector<EncodedUnitPtr> units;
  AudioTrack track(std::make_unique<OpusPacketSource>(packets), OpusSettings{}, [&](EncodedUnitPtr unit) {
    std::lock_guard lock(mutex);
    units.push_back(std::move(unit));
    arrived.notify_one();
  });
  track.start();
  {
    std::unique_lock lock(mutex);
    ASSERT_TRUE(arrived.wait_for(lock, 10s, [&] { return units.size() >= packets.size(); }))
        << units.size() << " of " << packets.size() << " packets in 10 s";
  }
  track.stop();
  ASSERT_EQ(units.size(), packets.size());
  for (std::size_t i = 0; i < units.size(); ++i) {
    EXPECT_EQ(units[i]->codec, Codec::kOpus);
    EXPECT_EQ(units[i]->bytes, packets[i].opus) << "packet " << i << " is the source's, byte for byte";
    EXPECT_EQ(units[i]->ptsNs, packets[i].captureNs) << "packet " << i;
    EXPECT_EQ(units[i]->sequence, i);
    EXPECT_TRUE(units[i]->keyframe);
  }
  const AudioTrackStats stats = track.stats();
  EXPECT_EQ(stats.packets, packets.size());
  EXPECT_EQ(stats.passed, packets.size());
  EXPECT_EQ(stats.encodeMsPerFrame, 0.0) << "nothing was encoded";
}

TEST(OpusPacket, ItsFramesAreReadFromItsTocAndAnythingElseIsZero) {
  OpusSettings twentyMs;
  OpusAudioEncoder encoder(twentyMs);
  ToneSource tone;
  std::vector<OpusPacket> made;
  while (made.empty()) {
    auto block = tone.next(1s);
    ASSERT_TRUE(block);
    made = encoder.encode(*block);
  }
  EXPECT_EQ(opusPacketFrames(made[0].data.data(), made[0].data.size()), 960u);
  EXPECT_EQ(opusPacketFrames(nullptr, 0), 0u);
  const std::uint8_t code3NoFrames[] = {0x03, 0x00};  // a code 3 packet that says it holds no frames
  EXPECT_EQ(opusPacketFrames(code3NoFrames, sizeof code3NoFrames), 0u);
}

TEST(AudioTrack, AnUnknownSourceIsRefusedWithTheKinds) {
  try {
    openAudioSource("mic");
    FAIL() << "openAudioSource(\"mic\") did not throw";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), Errc::kInvalidArgument);
    EXPECT_NE(std::string(e.what()).find("alsa:DEVICE"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace zerohop::audio
