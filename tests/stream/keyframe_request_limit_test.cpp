// KeyframeRequestLimit (src/stream/keyframe_request_limit.hpp): one viewer's PLI/FIR force at most one
// keyframe a second on the shared encode, however many it sends.
#include "stream/keyframe_request_limit.hpp"

#include <gtest/gtest.h>

namespace zerohop::stream {
namespace {

constexpr std::int64_t kMs = 1'000'000;

TEST(KeyframeRequestLimit, AHundredRequestsASecondForceOneKeyframeASecond) {
  KeyframeRequestLimit limit;
  int forced = 0;
  const std::int64_t t0 = 5000 * kMs;
  for (int i = 0; i < 300; ++i) forced += limit.allow(t0 + i * 10 * kMs) ? 1 : 0;  // 3 s at 100 a second
  EXPECT_EQ(forced, 3);
  EXPECT_EQ(limit.allowed(), 3u);
  EXPECT_EQ(limit.refused(), 297u);
}

TEST(KeyframeRequestLimit, TheFirstRequestAndOneASecondLaterPass) {
  KeyframeRequestLimit limit;
  EXPECT_TRUE(limit.allow(0)) << "the first request passes at once, whatever the clock reads";
  EXPECT_FALSE(limit.allow(999 * kMs));
  EXPECT_TRUE(limit.allow(1000 * kMs)) << "an honest viewer's repeated PLI a second later passes";
  EXPECT_FALSE(limit.allow(1500 * kMs));
  EXPECT_TRUE(limit.allow(60'000 * kMs));
}

}  // namespace
}  // namespace zerohop::stream
