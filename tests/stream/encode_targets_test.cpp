// EncodeTargets (src/stream/encode_targets.hpp): the H.264 and the VP8 encode of a stream each follow
// the weakest viewer of their own codec, never the other codec's viewers.
#include "stream/encode_targets.hpp"

#include <gtest/gtest.h>

namespace zerohop::stream {
namespace {

constexpr BitrateLimits kLimits{300, 2500};
constexpr std::int64_t kSecond = 1'000'000'000;
constexpr PixelFormat kH264 = PixelFormat::kH264, kVP8 = PixelFormat::kVP8;
constexpr double kRise = 1 + EncodeTarget::kRisePerSecond;  // a target's rise over one second

TEST(EncodeTargets, EachCodecFollowsTheWeakestViewerOfItsOwnCodec) {
  EncodeTargets t(kLimits);
  EXPECT_EQ(t.targetKbps(kH264), 2500u);
  EXPECT_EQ(t.targetKbps(kVP8), 2500u);

  t.update(kSecond, {{kH264, 2000}, {kVP8, 600}, {kH264, 1000}});
  EXPECT_EQ(t.targetKbps(kH264), 1000u);  // not 600: the VP8 viewer gets its own encode
  EXPECT_EQ(t.targetKbps(kVP8), 600u);
  EXPECT_EQ(t.viewersCounted(kH264), 2u);
  EXPECT_EQ(t.viewersCounted(kVP8), 1u);

  // The VP8 viewer's link gets worse, the H.264 viewers' better: each target moves on its own.
  t.update(2 * kSecond, {{kH264, 2500}, {kVP8, 400}, {kH264, 2500}});
  EXPECT_EQ(t.targetKbps(kVP8), 400u);
  EXPECT_NEAR(t.targetKbps(kH264), 1000 * kRise, 2);  // up at EncodeTarget's pace, untouched by the VP8 drop

  // The VP8 viewer leaves: its target rises towards the maximum, the H.264 target does not notice.
  t.update(3 * kSecond, {{kH264, 2500}, {kH264, 2500}});
  EXPECT_EQ(t.viewersCounted(kVP8), 0u);
  EXPECT_NEAR(t.targetKbps(kVP8), 400 * kRise, 2);
  EXPECT_NEAR(t.targetKbps(kH264), 1000 * kRise * kRise, 3);
}

TEST(EncodeTargets, AVp8ViewerAloneLeavesTheH264EncodeAtItsMaximum) {
  EncodeTargets t(kLimits);
  for (int i = 1; i <= 8; ++i) t.update(i * kSecond / 4, {{kVP8, 350}});
  EXPECT_EQ(t.targetKbps(kVP8), 350u);
  EXPECT_EQ(t.targetKbps(kH264), 2500u);
  EXPECT_EQ(t.viewersCounted(kH264), 0u);
}

TEST(EncodeTargets, OtherCodecsCountForNeitherAndLimitsBindBoth) {
  EncodeTargets t(kLimits);
  t.update(kSecond, {{PixelFormat::kI420, 100}, {kVP8, 100}});
  EXPECT_EQ(t.targetKbps(kH264), 2500u);
  EXPECT_EQ(t.targetKbps(kVP8), 300u);  // the minimum
  t.setLimits({300, 1000});
  EXPECT_EQ(t.limits().maxKbps, 1000u);
  EXPECT_EQ(t.targetKbps(kH264), 1000u);
  EXPECT_EQ(t.targetKbps(kVP8), 300u);
}

}  // namespace
}  // namespace zerohop::stream
