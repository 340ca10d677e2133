// KeyframeWaits (src/pipeline/keyframe_waits.hpp): a viewer's wait for an IDR the source cannot be asked
// for runs from the first request not honoured to the next IDR sent; requests during a wait join it; the
// IDR interval is the time between IDRs sent.
#include "keyframe_waits.hpp"

#include <gtest/gtest.h>

namespace zerohop {
namespace {

constexpr std::int64_t kMs = 1'000'000;
constexpr std::int64_t kT0 = 5000 * kMs;

TEST(KeyframeWaits, AWaitRunsFromTheFirstRequestToTheNextIdrAndLaterRequestsJoinIt) {
  KeyframeWaits waits;
  waits.keyframeSent(kT0);               // an IDR before anyone asked: no wait
  waits.unhonoured(kT0 + 100 * kMs);     // a viewer joins
  waits.unhonoured(kT0 + 300 * kMs);     // another, while the first waits: the same wait
  waits.keyframeSent(kT0 + 500 * kMs);   // the camera's next IDR
  waits.keyframeSent(kT0 + 1000 * kMs);  // no one waited for this one
  waits.unhonoured(kT0 + 1450 * kMs);
  waits.keyframeSent(kT0 + 1500 * kMs);
  const KeyframeWaitStatus s = waits.status();
  EXPECT_EQ(s.count, 2u);
  EXPECT_EQ(s.wait.samples, 2u);
  EXPECT_DOUBLE_EQ(s.maxMs, 400);
  EXPECT_DOUBLE_EQ(s.sumMs, 450);
  EXPECT_DOUBLE_EQ(s.wait.p50Ms, 50);
  EXPECT_DOUBLE_EQ(s.wait.p99Ms, 400);
  EXPECT_EQ(s.idrInterval.samples, 3u);
  EXPECT_DOUBLE_EQ(s.idrInterval.p50Ms, 500);
}

// Requests reach the source at most every 250 ms: one that comes due after an IDR went out was answered by
// that IDR (the viewer started there), not by the next one.
TEST(KeyframeWaits, ARequestThatComesDueAfterAnIdrWasAnsweredByIt) {
  KeyframeWaits waits;
  waits.keyframeSent(kT0);
  waits.keyframeSent(kT0 + 500 * kMs);  // an IDR while the request asked at +400 ms waited its turn
  waits.unhonoured(kT0 + 400 * kMs);    // due now, at +650 ms
  waits.keyframeSent(kT0 + 1000 * kMs);
  const KeyframeWaitStatus s = waits.status();
  EXPECT_EQ(s.count, 1u);
  EXPECT_DOUBLE_EQ(s.maxMs, 100);  // +400 -> +500, not -> +1000
  EXPECT_DOUBLE_EQ(s.idrInterval.p99Ms, 500);
}

TEST(KeyframeWaits, NothingBeforeAnyRequestAndTheWindowKeepsTheLastWaits) {
  KeyframeWaits waits(/*window=*/4);
  EXPECT_EQ(waits.status().count, 0u);
  EXPECT_EQ(waits.status().idrInterval.samples, 0u);
  for (int i = 0; i < 10; ++i) {  // waits of 10, 20, ... 100 ms
    waits.unhonoured(kT0 + i * 1000 * kMs);
    waits.keyframeSent(kT0 + i * 1000 * kMs + (i + 1) * 10 * kMs);
  }
  const KeyframeWaitStatus s = waits.status();
  EXPECT_EQ(s.count, 10u);
  EXPECT_EQ(s.wait.samples, 4u);  // 70, 80, 90, 100
  EXPECT_DOUBLE_EQ(s.wait.p50Ms, 80);
  EXPECT_DOUBLE_EQ(s.maxMs, 100);
}

}  // namespace
}  // namespace zerohop
