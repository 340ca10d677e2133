// ViewerKeyframeRequests (src/stream/viewer_keyframe_requests.hpp): a viewer's PLI/FIR limited to one a
// second, a held-back one served later, and nothing forwarded once closed; no GStreamer, time passed in.
#include "stream/viewer_keyframe_requests.hpp"

#include <gtest/gtest.h>

#include <cstdint>

namespace zerohop::stream {
namespace {

constexpr std::int64_t kSecond = 1'000'000'000;
constexpr std::int64_t kStart = 50 * kSecond;

TEST(ViewerKeyframeRequests, AFloodForwardsOneASecondAndDefersTheRest) {
  int forwarded = 0;
  ViewerKeyframeRequests r("test", [&] { ++forwarded; });
  EXPECT_TRUE(r.onViewerRequest(kStart));
  for (int i = 1; i <= 99; ++i) EXPECT_FALSE(r.onViewerRequest(kStart + i * 10'000'000));  // 100 a second
  EXPECT_EQ(forwarded, 1);
  EXPECT_EQ(r.refused(), 99u);
  EXPECT_TRUE(r.deferred());
  // A delta unit inside the gap serves nothing; the first one after it serves the deferred request once.
  EXPECT_FALSE(r.onUnit(false, kStart + kSecond - 1));
  EXPECT_TRUE(r.onUnit(false, kStart + kSecond));
  EXPECT_FALSE(r.onUnit(false, kStart + 3 * kSecond));
  EXPECT_EQ(forwarded, 2);
  EXPECT_FALSE(r.deferred());
}

TEST(ViewerKeyframeRequests, AKeyframeReachingTheViewerServesTheDeferredRequest) {
  int forwarded = 0;
  ViewerKeyframeRequests r("test", [&] { ++forwarded; });
  r.onViewerRequest(kStart);
  r.onViewerRequest(kStart + 1);
  EXPECT_FALSE(r.onUnit(true, kStart + 2));
  EXPECT_FALSE(r.deferred());
  EXPECT_FALSE(r.onUnit(false, kStart + 2 * kSecond));
  EXPECT_EQ(forwarded, 1);
}

TEST(ViewerKeyframeRequests, FallingBehindIsForwardedWhateverTheLimit) {
  int forwarded = 0;
  ViewerKeyframeRequests r("test", [&] { ++forwarded; });
  r.onViewerRequest(kStart);
  r.onFellBehind();
  r.onFellBehind();
  EXPECT_EQ(forwarded, 3);
}

TEST(ViewerKeyframeRequests, NothingIsForwardedOnceClosed) {
  int forwarded = 0;
  ViewerKeyframeRequests r("test", [&] { ++forwarded; });
  r.onViewerRequest(kStart);
  r.onViewerRequest(kStart + 1);  // deferred
  r.close();
  EXPECT_FALSE(r.onViewerRequest(kStart + 5 * kSecond));
  EXPECT_FALSE(r.onUnit(false, kStart + 5 * kSecond));
  r.onFellBehind();
  r.close();  // twice is fine (the session's destructor closes before and after its pipeline stops)
  EXPECT_EQ(forwarded, 1);
}

}  // namespace
}  // namespace zerohop::stream
