// RetransmissionBudget (src/stream/retransmission_budget.hpp): a NACKed packet is resent once per RTT
// at most (twice at once on a short round trip), retransmissions stay within a share of the estimate
// over half a second, and packets that left the history (or were never sent), or went out before the
// last keyframe, are not resent.
#include <gtest/gtest.h>

#include <vector>

#include "stream/retransmission_budget.hpp"

namespace zerohop::stream {
namespace {

constexpr std::int64_t kMs = 1'000'000;

TEST(RetransmissionBudget, ResendsAPacketAtMostOncePerRoundTrip) {
  RetransmissionBudget b;
  b.setPath(1000, 200);  // 200 ms RTT
  const std::int64_t t0 = 1000 * kMs;
  b.onSent(7, 1200, t0);
  EXPECT_TRUE(b.allow(7, t0 + 10 * kMs));
  EXPECT_FALSE(b.allow(7, t0 + 110 * kMs)) << "asked again before the copy could arrive";
  EXPECT_TRUE(b.allow(7, t0 + 200 * kMs)) << "a round trip later: that copy was lost too";
  EXPECT_EQ(b.allowed(), 2u);
  EXPECT_EQ(b.refused(), 1u);
}

TEST(RetransmissionBudget, WithoutAKnownRoundTripWaitsNinetyMilliseconds) {
  RetransmissionBudget b;
  b.setPath(1000, 1);  // the receiver reports' RTT on a LAN, blind to the queue
  b.onSent(1, 1200, 0);
  EXPECT_TRUE(b.allow(1, 5 * kMs));
  EXPECT_FALSE(b.allow(1, 60 * kMs));
  EXPECT_TRUE(b.allow(1, 5 * kMs + 90 * kMs)) << "Chromium asks again every 100 ms: its next request is served";
}

TEST(RetransmissionBudget, KeepsRetransmissionsWithinAQuarterOfTheEstimate) {
  RetransmissionBudget b;
  b.setPath(800, 100);  // 0.25 x 800 kb/s over 500 ms = 12500 bytes
  for (std::uint16_t s = 0; s < 100; ++s) b.onSent(s, 1000, 0);
  int first = 0;
  for (std::uint16_t s = 0; s < 100; ++s) first += b.allow(s, 10 * kMs) ? 1 : 0;
  EXPECT_EQ(first, 12);
  // Half a second later the window is empty again.
  int later = 0;
  for (std::uint16_t s = 50; s < 100; ++s) later += b.allow(s, 520 * kMs) ? 1 : 0;
  EXPECT_EQ(later, 12);
  EXPECT_EQ(b.allowedBytes(), 24u * 1000);
}

TEST(RetransmissionBudget, OnAShortRoundTripARepairGoesOutTwiceWhereTheBudgetHoldsBoth) {
  RetransmissionBudget b;
  b.setPath(2500, 22);  // a LAN: Chromium would ask again for a lost repair only 100 ms later
  b.onSent(1, 1200, 0);
  EXPECT_EQ(b.allow(1, kMs), 2u);
  EXPECT_EQ(b.twice(), 1u);
  EXPECT_EQ(b.allowed(), 1u) << "one request served";
  EXPECT_EQ(b.allowedBytes(), 2400u) << "both copies count";
  for (const double rtt : {0.0, 60.0, 200.0}) {  // unknown, or long enough for the playout delay to cover
    RetransmissionBudget once;
    once.setPath(2500, rtt);
    once.onSent(1, 1200, 0);
    EXPECT_EQ(once.allow(1, kMs), 1u) << "RTT " << rtt << " ms";
    EXPECT_EQ(once.twice(), 0u);
  }
  // 0.25 x 800 kb/s over 500 ms = 12500 bytes: five requests twice (11000), the sixth once (12100).
  RetransmissionBudget tight;
  tight.setPath(800, 20);
  for (std::uint16_t s = 0; s < 10; ++s) tight.onSent(s, 1100, 0);
  std::vector<std::uint32_t> copies;
  for (std::uint16_t s = 0; s < 7; ++s) copies.push_back(tight.allow(s, 10 * kMs));
  EXPECT_EQ(copies, (std::vector<std::uint32_t>{2, 2, 2, 2, 2, 1, 0}));
}

TEST(RetransmissionBudget, NeverResendsWhatItDidNotSeeOrNoLongerHolds) {
  RetransmissionBudget b;
  b.setPath(0, 0);  // no estimate yet: no budget, the other rules still apply
  EXPECT_FALSE(b.allow(3, kMs)) << "never sent";
  b.onSent(3, 1200, 0);
  b.onSent(static_cast<std::uint16_t>(3 + RetransmissionBudget::kHistory), 1200, kMs);  // takes its slot
  EXPECT_FALSE(b.allow(3, 2 * kMs)) << "out of the history";
  EXPECT_TRUE(b.allow(static_cast<std::uint16_t>(3 + RetransmissionBudget::kHistory), 2 * kMs));
  // Sequence numbers wrap.
  b.onSent(65535, 1200, 3 * kMs);
  b.onSent(0, 1200, 3 * kMs);
  EXPECT_TRUE(b.allow(65535, 4 * kMs));
  EXPECT_TRUE(b.allow(0, 4 * kMs));
}

TEST(RetransmissionBudget, NothingFromBeforeTheLastKeyframe) {
  RetransmissionBudget b;
  b.setPath(1000, 50);
  for (std::uint16_t s = 65530; s != 5; ++s) b.onSent(s, 1000, 0, s == 2);  // a keyframe from 2 on, across the wrap
  EXPECT_FALSE(b.allow(65533, kMs)) << "the receiver decodes from the keyframe on";
  EXPECT_FALSE(b.allow(1, kMs));
  EXPECT_TRUE(b.allow(2, kMs)) << "the keyframe's own packets are repaired";
  EXPECT_TRUE(b.allow(4, kMs));
  EXPECT_EQ(b.keyframes(), 1u);
}

}  // namespace
}  // namespace zerohop::stream

namespace zerohop::stream {
namespace {

// RFC 7741 payload descriptors as rtpvp8pay writes them, with and without its optional fields.
TEST(Vp8KeyframeStart, TheFirstPacketOfAKeyframeIsSeenWhateverTheDescriptorCarries) {
  const std::vector<std::vector<std::uint8_t>> keyframes = {
      {0x10, 0x50},                          // S, PID 0; payload header P = 0 (the frame tag's bit 0)
      {0x90, 0x80, 0x05, 0x50},              // X; I with a 7-bit PictureID
      {0x90, 0x80, 0x81, 0x23, 0x50},        // X; I with a 15-bit PictureID (M)
      {0x90, 0xc0, 0x81, 0x23, 0x07, 0x50},  // X; I (15 bits) and L (TL0PICIDX)
      {0x90, 0xa0, 0x05, 0x40, 0x50},        // X; I (7 bits) and T (TID/Y/KEYIDX)
  };
  for (const auto& p : keyframes) EXPECT_TRUE(isVp8KeyframeStart(p.data(), p.size())) << p.size();
}

TEST(Vp8KeyframeStart, InterframesLaterPacketsAndShortPayloadsAreNot) {
  const std::vector<std::vector<std::uint8_t>> others = {
      {0x10, 0x51},                    // P = 1: an interframe
      {0x90, 0x80, 0x81, 0x23, 0x31},  // the same behind a 15-bit PictureID
      {0x00, 0x50},                    // not the start of a partition
      {0x11, 0x50},                    // the start of partition 1
      {0x90, 0x80, 0x81},              // cut inside the PictureID
      {0x90},                          // cut after the first byte
      {},
  };
  for (const auto& p : others) EXPECT_FALSE(isVp8KeyframeStart(p.data(), p.size())) << p.size();
  EXPECT_FALSE(isVp8KeyframeStart(nullptr, 4));
}

}  // namespace
}  // namespace zerohop::stream
