#include "audio/tone_source.hpp"

#include <gtest/gtest.h>

#include <cstdlib>
#include <vector>

#include "core/av_marker.hpp"
#include "zerohop/clock.hpp"
#include "zerohop/error.hpp"

namespace zerohop::audio {
namespace {

constexpr std::int16_t kClickLevel = 32'000;

// Index of the first sample at click level, or -1.
long firstClick(const std::vector<std::int16_t>& s, std::uint32_t channels) {
  for (std::size_t i = 0; i < s.size() / channels; ++i)
    if (std::abs(s[i * channels]) == kClickLevel) return static_cast<long>(i);
  return -1;
}

TEST(ToneSource, ClickStartsAtTheFirstSampleOnOrAfterEachMarker) {
  ToneSettings s;
  s.channels = 2;
  // A tone that started 0.3 s before a marker, rendered over the marker: the click begins at the first
  // sample whose instant is at or after the marker (less than one sample period, 20.8 us, after it).
  const std::int64_t origin = 41'700'000'000 + 123'457;
  const std::int64_t marker = avMarkerAtOrAfter(origin);
  std::vector<std::int16_t> pcm(48'000 * s.channels);
  renderTone(pcm, origin, 0, s);
  const long k = firstClick(pcm, s.channels);
  ASSERT_GE(k, 0) << "no click in a second of tone";
  const std::int64_t clickNs = origin + framesToNs(k);
  EXPECT_GE(clickNs, marker);
  EXPECT_LT(clickNs - marker, 20'834);
  EXPECT_EQ(pcm[static_cast<std::size_t>(k) * 2], pcm[static_cast<std::size_t>(k) * 2 + 1]);  // both channels
  // It lasts clickNs (2 ms: 96 samples), then the sine is back, well below click level.
  for (long i = k; i < k + 95; ++i)
    EXPECT_EQ(std::abs(pcm[static_cast<std::size_t>(i) * 2]), kClickLevel) << i;
  for (long i = k + 97; i < k + 200; ++i)
    EXPECT_LT(std::abs(pcm[static_cast<std::size_t>(i) * 2]), 8'200) << i;
}

TEST(ToneSource, RenderIsAPureFunctionOfTheClock) {
  ToneSettings s;
  const std::int64_t origin = 7'999'000'000;
  std::vector<std::int16_t> whole(4'800), first(2'400), second(2'400);
  renderTone(whole, origin, 0, s);
  renderTone(first, origin, 0, s);
  renderTone(second, origin, 2'400, s);  // the second half on its own: the same samples
  EXPECT_TRUE(std::equal(first.begin(), first.end(), whole.begin()));
  EXPECT_TRUE(std::equal(second.begin(), second.end(), whole.begin() + 2'400));
  EXPECT_GE(firstClick(whole, 1), 0);  // the marker at 8 s lies 1 ms in
}

TEST(ToneSource, DeliversTenMillisecondBlocksInRealTimeStampedOnTheCaptureClock) {
  ToneSource tone;
  const AudioSourceInfo info = tone.info();
  EXPECT_EQ(info.name, "test");
  EXPECT_EQ(info.periodFrames, 480u);
  std::int64_t previous = 0;
  for (int i = 0; i < 10; ++i) {
    auto b = tone.next(std::chrono::milliseconds(2'000));
    ASSERT_TRUE(b) << "block " << i << " did not come within 2 s";
    EXPECT_EQ(b->frameCount(), 480u);
    EXPECT_EQ(b->sequence, static_cast<std::uint64_t>(i));
    // Not before its last sample's instant: a sound card could not have delivered it earlier.
    EXPECT_GE(monotonicNs(), b->captureNs + b->durationNs());
    if (i > 0) {
      EXPECT_EQ(b->captureNs - previous, 10'000'000);
    }
    previous = b->captureNs;
  }
  EXPECT_EQ(tone.counters().blocks, 10u);
}

TEST(ToneSource, RefusesAChannelCountItCannotMake) {
  ToneSettings s;
  s.channels = 0;
  EXPECT_THROW(ToneSource{s}, Error);
}

}  // namespace
}  // namespace zerohop::audio
