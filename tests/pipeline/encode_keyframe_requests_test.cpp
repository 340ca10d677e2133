// EncodeKeyframeRequests (src/pipeline/encode_keyframe_requests.hpp): each encode's keyframe requests
// (H.264 rungs, VP8 rungs) merged and rate-limited on their own, so a flood on one rung forces nothing on
// another.
#include "encode_keyframe_requests.hpp"

#include <gtest/gtest.h>

namespace zerohop {
namespace {

constexpr std::int64_t kMs = 1'000'000;
constexpr std::int64_t kT0 = 5000 * kMs;

TEST(EncodeKeyframeRequests, AFloodOnOneRungForcesNothingOnAnotherAndOneAQuarterSecondOnItsOwn) {
  EncodeKeyframeRequests requests(/*initial=*/false);
  int rung0 = 0, rung1 = 0, vp8 = 0;
  for (int i = 0; i < 300; ++i) {  // 3 s at 100 requests a second on rung 1, taken once a frame (every 10 ms)
    requests.request({Codec::kH264, 1});
    const auto due = requests.take(kT0 + i * 10 * kMs);
    rung0 += due.rung(0) ? 1 : 0;
    rung1 += due.rung(1) ? 1 : 0;
    vp8 += due.vp8Rungs != 0 ? 1 : 0;
  }
  EXPECT_EQ(rung0, 0) << "rung 1's requests forced keyframes on rung 0";
  EXPECT_EQ(vp8, 0) << "rung 1's requests forced keyframes on VP8";
  EXPECT_EQ(rung1, 12) << "one every 250 ms over 3 s";
}

TEST(EncodeKeyframeRequests, EachEncodeHasItsOwnGap) {
  EncodeKeyframeRequests requests(/*initial=*/true);
  auto due = requests.take(kT0);
  EXPECT_TRUE(due.rung(0)) << "rung 0 is pending from the start";
  EXPECT_FALSE(due.rung(1));
  requests.request({Codec::kH264, 1});
  requests.request({Codec::kVP8, 0});
  due = requests.take(kT0 + 10 * kMs);
  EXPECT_TRUE(due.rung(1)) << "rung 0's keyframe 10 ms ago does not hold back rung 1's";
  EXPECT_TRUE(due.vp8Rung(0));
  EXPECT_FALSE(due.rung(0));

  requests.request({Codec::kH264, 0});
  EXPECT_FALSE(requests.take(kT0 + 100 * kMs).rung(0)) << "inside rung 0's gap";
  EXPECT_TRUE(requests.take(kT0 + 250 * kMs).rung(0)) << "kept pending, due once the gap has passed";
  EXPECT_FALSE(requests.take(kT0 + 600 * kMs).rung(0)) << "taken once";
}

TEST(EncodeKeyframeRequests, AVp8RungsRequestsForceNothingOnItsH264RungOrAnotherVp8Rung) {
  EncodeKeyframeRequests requests(/*initial=*/false);
  requests.request({Codec::kVP8, 2});
  const auto due = requests.take(kT0);
  EXPECT_TRUE(due.vp8Rung(2));
  EXPECT_EQ(due.vp8Rungs, 1u << 2) << "VP8 rung 2's request forced another VP8 rung";
  EXPECT_EQ(due.rungs, 0u) << "VP8 rung 2's request forced an H.264 rung";
  requests.request({Codec::kH264, 2});
  requests.request({Codec::kVP8, 2});
  const auto next = requests.take(kT0 + 10 * kMs);
  EXPECT_TRUE(next.rung(2)) << "H.264 rung 2 has a gap of its own";
  EXPECT_FALSE(next.vp8Rung(2)) << "inside VP8 rung 2's gap";
}

TEST(EncodeKeyframeRequests, ASinkThatNamesNoEncodeAsksEveryOne) {
  EncodeKeyframeRequests requests(/*initial=*/false);
  requests.requestAll();
  const auto due = requests.take(kT0);
  for (std::size_t r = 0; r < EncodeKeyframeRequests::kMaxRungs; ++r) {
    EXPECT_TRUE(due.rung(r)) << r;
    EXPECT_TRUE(due.vp8Rung(r)) << r;
  }
  const auto none = requests.take(kT0 + kMs * 1000);
  EXPECT_EQ(none.rungs, 0u);
  EXPECT_EQ(none.vp8Rungs, 0u);
  requests.request({Codec::kH264, 99});
  EXPECT_TRUE(requests.take(kT0 + kMs * 2000).rung(EncodeKeyframeRequests::kMaxRungs - 1))
      << "a rung past the last kept apart is the last";
}

}  // namespace
}  // namespace zerohop
