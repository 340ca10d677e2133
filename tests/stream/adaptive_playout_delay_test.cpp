// AdaptivePlayoutDelay (src/stream/adaptive_playout_delay.hpp): a viewer whose packets are resent one
// long round trip later gets a playout delay that covers the repair, only while repairs go on; a short
// round trip never moves it; a configured delay is the floor.
#include "stream/adaptive_playout_delay.hpp"

#include <gtest/gtest.h>

namespace zerohop::stream {
namespace {

constexpr std::int64_t kSecond = 1'000'000'000;

TEST(AdaptivePlayoutDelay, ALongRoundTripWithRetransmissionsRaisesTheMinimumToCoverOneRepair) {
  AdaptivePlayoutDelay p({0, 0});
  EXPECT_EQ(p.update(kSecond, 0, 105), (PlayoutDelay{0, 0})) << "no retransmission yet";
  // 1.5 x 105 + 50 = 207.5, up to the next 10 ms; the maximum twice that.
  EXPECT_EQ(p.update(2 * kSecond, 3, 105), (PlayoutDelay{210, 420}));
  EXPECT_TRUE(p.raised());
  // A later, smaller RTT reading while repairs go on does not shave the margin.
  EXPECT_EQ(p.update(3 * kSecond, 4, 80), (PlayoutDelay{210, 420}));
  // A larger one raises it further.
  EXPECT_EQ(p.update(4 * kSecond, 5, 200), (PlayoutDelay{350, 700}));
}

TEST(AdaptivePlayoutDelay, AShortRoundTripNeverRaisesIt) {
  AdaptivePlayoutDelay p({0, 0});
  for (int i = 1; i <= 100; ++i) EXPECT_EQ(p.update(i * kSecond / 4, i * 10, 20), (PlayoutDelay{0, 0}));
  EXPECT_FALSE(p.raised());
}

TEST(AdaptivePlayoutDelay, ComesBackTwentySecondsAfterTheLastRetransmission) {
  AdaptivePlayoutDelay p({0, 0});
  p.update(kSecond, 1, 100);
  ASSERT_TRUE(p.raised());
  std::int64_t now = kSecond;
  while (now < kSecond + AdaptivePlayoutDelay::kHoldNs - kSecond / 4) {
    now += kSecond / 4;
    EXPECT_TRUE(p.update(now, 1, 100).minMs > 0) << "held at " << now / 1e9 << " s";
  }
  // Back to the configured 0,0 as 10,20: Firefox stops presenting on a switch to a minimum of 0
  // (adaptive_playout_delay.hpp).
  EXPECT_EQ(p.update(kSecond + AdaptivePlayoutDelay::kHoldNs, 1, 100), (PlayoutDelay{10, 20}));
  EXPECT_FALSE(p.raised());
  EXPECT_EQ(p.update(kSecond + AdaptivePlayoutDelay::kHoldNs + kSecond, 2, 100).minMs, 200) << "raised again";
}

TEST(AdaptivePlayoutDelay, ComesBackAtOnceWhenTheRoundTripFalls) {
  AdaptivePlayoutDelay p({0, 0});
  p.update(kSecond, 1, 100);
  ASSERT_TRUE(p.raised());
  EXPECT_EQ(p.update(2 * kSecond, 1, 30), (PlayoutDelay{10, 20}));
  AdaptivePlayoutDelay configured({50, 300});
  configured.update(kSecond, 1, 100);
  ASSERT_TRUE(configured.raised());
  EXPECT_EQ(configured.update(2 * kSecond, 1, 30), (PlayoutDelay{50, 300})) << "a configured delay comes back as it is";
}

TEST(AdaptivePlayoutDelay, TheConfiguredDelayIsTheFloorAndTheCeilingIsOneSecond) {
  AdaptivePlayoutDelay p({300, 500});
  EXPECT_EQ(p.update(kSecond, 2, 100), (PlayoutDelay{300, 500})) << "already covers the repair";
  AdaptivePlayoutDelay far({0, 0});
  EXPECT_EQ(far.update(kSecond, 2, 5000), (PlayoutDelay{1000, 2000}));
}

TEST(AdaptivePlayoutDelay, AnUnknownRoundTripChangesNothing) {
  AdaptivePlayoutDelay p({0, 0});
  EXPECT_EQ(p.update(kSecond, 5, 0), (PlayoutDelay{0, 0}));
  EXPECT_EQ(p.update(2 * kSecond, 9, -1), (PlayoutDelay{0, 0}));
}

}  // namespace
}  // namespace zerohop::stream
