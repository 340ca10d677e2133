// AudioTrack: the tone through the capture thread, the queue and the one Opus encode, as serve runs it
// for a camera with sound. Packets come out every 20 ms of sound, stamped on the capture clock 20 ms
// apart, each one Opus packet that libopus decodes to 960 samples; stop() joins both threads.
#include "audio/audio_track.hpp"

#include <gtest/gtest.h>
#include <opus/opus.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <mutex>
#include <thread>
#include <vector>

#include "audio/fec_loss.hpp"
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
