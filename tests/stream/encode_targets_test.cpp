// EncodeTargets (src/stream/encode_targets.hpp): the H.264 and the VP8 encode of a stream each follow
// the weakest viewer of their own codec, never the other codec's viewers; a viewer without NACK only
// while no viewer with NACK shares the encode (followedEstimates, issue 33).
#include "stream/encode_targets.hpp"

#include <gtest/gtest.h>

namespace zerohop::stream {
namespace {

constexpr BitrateLimits kLimits{300, 2500};
constexpr std::int64_t kSecond = 1'000'000'000;
constexpr Codec kH264 = Codec::kH264, kVP8 = Codec::kVP8;
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
  t.update(kSecond, {{Codec::kOpus, 100}, {kVP8, 100}});
  EXPECT_EQ(t.targetKbps(kH264), 2500u);
  EXPECT_EQ(t.targetKbps(kVP8), 300u);  // the minimum
  t.setLimits({300, 1000});
  EXPECT_EQ(t.limits().maxKbps, 1000u);
  EXPECT_EQ(t.targetKbps(kH264), 1000u);
  EXPECT_EQ(t.targetKbps(kVP8), 300u);
}

TEST(FollowedEstimates, AViewerWithoutNackIsPassedOverWhileAViewerWithNackSharesTheEncode) {
  // A viewer claiming loss it cannot be held to (no NACK) beside one whose claims are checked.
  EXPECT_EQ(followedEstimates({{kH264, 2000, true}, {kH264, 300, false}}),
            (std::vector<std::uint32_t>{2000}));
  // Its estimate above the checked one's changes nothing either: the checked viewers set the encode.
  EXPECT_EQ(followedEstimates({{kH264, 900, true}, {kH264, 2500, false}, {kH264, 1200, true}}),
            (std::vector<std::uint32_t>{900, 1200}));
  // Alone, or among viewers without NACK only, it is believed: the encode is its own picture.
  EXPECT_EQ(followedEstimates({{kH264, 300, false}}), (std::vector<std::uint32_t>{300}));
  EXPECT_EQ(followedEstimates({{kH264, 300, false}, {kH264, 1500, false}}),
            (std::vector<std::uint32_t>{300, 1500}));
  EXPECT_TRUE(followedEstimates({}).empty());
}

TEST(EncodeTargets, AViewerWithoutNackCannotPullAnEncodeBelowItsViewersWithNack) {
  EncodeTargets t(kLimits);
  // A hostile viewer (no NACK) claims loss down to the minimum; the honest H.264 viewer (NACK) holds 2000.
  t.update(kSecond, {{kH264, 2000, true}, {kH264, 300, false}});
  EXPECT_EQ(t.targetKbps(kH264), 2000u) << "the unchecked claim pulled the shared encode down";
  EXPECT_EQ(t.viewersCounted(kH264), 1u);
  // It pulls down only the encode it has to itself: the VP8 one, where it is the only viewer.
  t.update(2 * kSecond, {{kH264, 2000, true}, {kVP8, 300, false}});
  EXPECT_EQ(t.targetKbps(kVP8), 300u);
  EXPECT_EQ(t.targetKbps(kH264), 2000u);
  // The viewer with NACK leaves: the one left is believed, its encode its own picture.
  t.update(3 * kSecond, {{kH264, 400, false}});
  EXPECT_EQ(t.targetKbps(kH264), 400u);
  EXPECT_EQ(t.viewersCounted(kH264), 1u);
}

}  // namespace
}  // namespace zerohop::stream
