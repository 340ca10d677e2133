// The ladder of renditions and each viewer's place on it (src/stream/renditions.hpp): the spec's
// ladder, placement with hysteresis (down at once, up one rung after a hold), and the switch of a
// viewer's track at the first keyframe of its new rung; a viewer's own choice of its highest rung.
#include "stream/renditions.hpp"

#include <gtest/gtest.h>

#include <optional>

#include "stream/layer_request.hpp"
#include "zerohop/error.hpp"

namespace zerohop::stream {
namespace {

constexpr std::int64_t kSecond = 1'000'000'000;

TEST(RenditionLadder, OnIsFullHalfAndQuarterSizeWithEvenSizesAndOwnRanges) {
  const auto ladder = renditionLadder("on", 1280, 720, 2500);
  ASSERT_EQ(ladder.size(), 3u);
  EXPECT_EQ(ladder[0].width, 1280u);
  EXPECT_EQ(ladder[1].width, 640u);
  EXPECT_EQ(ladder[1].height, 360u);
  EXPECT_EQ(ladder[2].width, 320u);
  EXPECT_EQ(ladder[2].height, 180u);
  EXPECT_EQ(ladder[0].maxKbps, 2500u);
  EXPECT_EQ(ladder[0].minKbps, 1000u);
  EXPECT_EQ(ladder[1].maxKbps, 1000u);
  EXPECT_EQ(ladder[2].maxKbps, 375u);
  // Odd sizes are rounded down to even ones (4:2:0 chroma).
  const auto odd = renditionLadder("on", 1278, 718, 2500);
  EXPECT_EQ(odd[1].height, 358u);
  EXPECT_EQ(odd[2].width, 318u);
  EXPECT_EQ(odd[2].height, 178u);
}

TEST(RenditionLadder, AutoLeavesOutTheRungsUnder320x180) {
  EXPECT_EQ(renditionLadder("auto", 1920, 1080, 4000).size(), 3u) << "1080p: 960x540 and 480x270 below it";
  const auto hd = renditionLadder("auto", 1280, 720, 2500);
  ASSERT_EQ(hd.size(), 3u);
  EXPECT_EQ(hd[2].width, 320u);
  EXPECT_EQ(hd[2].height, 180u);
  const auto sd = renditionLadder("auto", 640, 360, 2500);
  ASSERT_EQ(sd.size(), 2u) << "640x360: 320x180 only (160x90 is left out)";
  EXPECT_EQ(sd[1].width, 320u);
  EXPECT_EQ(sd[1].maxKbps, 1000u) << "the rungs keep on's ranges";
  EXPECT_EQ(sd[1].minKbps, 375u);
  const auto portrait = renditionLadder("auto", 720, 1280, 2500);
  ASSERT_EQ(portrait.size(), 3u) << "either way up";
  EXPECT_EQ(portrait[2].width, 180u);
  EXPECT_TRUE(renditionLadder("auto", 320, 240, 2500).empty()) << "160x120 is too small: one encode";
  EXPECT_TRUE(renditionLadder("auto", 630, 354, 2500).empty()) << "just under 640x360";
  EXPECT_EQ(renditionLadder("on", 320, 240, 2500).size(), 3u) << "on keeps every rung";
}

TEST(RenditionLadder, OffIsNoLadderAndAListIsTakenAsWritten) {
  EXPECT_TRUE(renditionLadder("off", 1280, 720, 2500).empty());
  EXPECT_TRUE(renditionLadder("", 1280, 720, 2500).empty());
  EXPECT_TRUE(renditionLadder("1:300-2500", 1280, 720, 2500).empty())
      << "one rung is the one encode of before";
  const auto ladder = renditionLadder("1:800-2000,4:100-400", 640, 480, 2500);
  ASSERT_EQ(ladder.size(), 2u);
  EXPECT_EQ(ladder[1].width, 160u);
  EXPECT_EQ(ladder[1].height, 120u);
  EXPECT_EQ(ladder[1].minKbps, 100u);
  EXPECT_EQ(ladder[0].maxKbps, 2000u);
}

TEST(RenditionLadder, AMalformedSpecSaysWhatIsExpected) {
  for (const char* bad : {"2:100-200,4:50-100", "1:100-200,1:50-100", "1:300-200,2:10-20", "1:100",
                          "1:a-b,2:1-2", "1:100-200,3:50-100", "sometimes"}) {
    try {
      renditionLadder(bad, 1280, 720, 2500);
      ADD_FAILURE() << bad << " was taken";
    } catch (const Error& e) {
      EXPECT_EQ(e.code(), Errc::kInvalidArgument) << bad;
      EXPECT_NE(std::string(e.what()).find("expected auto, off, on, or DIV:MIN-MAX"), std::string::npos)
          << e.what();
    }
  }
}

TEST(RenditionPlacement, GoesDownAtOnceToTheRungItsEstimateFits) {
  RenditionPlacement p(renditionLadder("on", 1280, 720, 2500));  // needs 1000, 375, 0
  EXPECT_EQ(p.update(kSecond, 2400), 0u);
  EXPECT_EQ(p.update(kSecond + 250'000'000, 999), 1u);
  EXPECT_EQ(p.update(kSecond + 500'000'000, 100), 2u);
  EXPECT_EQ(p.fits(0), 2u) << "the lowest rung needs nothing";
  // From the top straight to the bottom in one update.
  RenditionPlacement q(renditionLadder("on", 1280, 720, 2500));
  EXPECT_EQ(q.update(kSecond, 300), 2u);
}

TEST(RenditionPlacement, GoesUpOneRungOnlyAfterTheEstimateHeldTheNeed) {
  RenditionPlacement p(renditionLadder("on", 1280, 720, 2500), 2);
  std::int64_t t = kSecond;
  EXPECT_EQ(p.update(t, 2500), 2u);  // the hold starts
  t += RenditionPlacement::kUpHoldNs - 250'000'000;
  EXPECT_EQ(p.update(t, 2500), 2u) << "up before the hold passed";
  t += 250'000'000;
  EXPECT_EQ(p.update(t, 2500), 1u) << "one rung up once the hold passed";
  EXPECT_EQ(p.update(t + 250'000'000, 2500), 1u) << "the next rung waits a hold of its own";
  t += RenditionPlacement::kUpHoldNs;
  EXPECT_EQ(p.update(t, 2500), 0u);
}

TEST(RenditionPlacement, AnEstimateThatDipsBelowTheNeedStartsTheHoldOver) {
  RenditionPlacement p(renditionLadder("on", 1280, 720, 2500), 1);
  std::int64_t t = kSecond;
  p.update(t, 1200);
  t += 2 * kSecond;
  EXPECT_EQ(p.update(t, 900), 1u);  // below rung 0's need (1000), above its own (375): stays
  t += kSecond;
  EXPECT_EQ(p.update(t, 1200), 1u);  // the hold starts again
  t += 2 * kSecond;
  EXPECT_EQ(p.update(t, 1200), 1u) << "held 2 s since the dip, not the 3 s a move up needs";
  t += kSecond;
  EXPECT_EQ(p.update(t, 1200), 0u);
}

TEST(RenditionPlacement, AViewersChosenTopHoldsItDownAndLetsItBackUpAtOnce) {
  RenditionPlacement p(renditionLadder("on", 1280, 720, 2500));
  std::int64_t t = kSecond;
  EXPECT_EQ(p.update(t, 2500), 0u);
  p.setTop(2);
  EXPECT_EQ(p.rung(), 2u) << "a chosen top moves the viewer down before its next estimate";
  EXPECT_EQ(p.update(t += 250'000'000, 2500), 2u)
      << "an estimate that fits rung 0 does not lift it past its top";
  p.setTop(1);
  EXPECT_EQ(p.update(t += 250'000'000, 2500), 1u)
      << "up to the new top at once: its estimate has fit it all along";
  p.setTop(0);
  EXPECT_EQ(p.rung(), 0u);
  p.setTop(1);
  EXPECT_EQ(p.update(t += 250'000'000, 100), 2u)
      << "a top is the highest it takes: a low estimate still goes lower";
  p.setTop(9);
  EXPECT_EQ(p.top(), 2u) << "clamped to the ladder";
}

TEST(RungRoute, SwitchesAtTheFirstKeyframeOfTheTargetRungAndNotBefore) {
  RungRoute r;
  EXPECT_TRUE(r.take(0, false));
  EXPECT_FALSE(r.take(1, true)) << "no switch pending: another rung's units are not taken";
  r.target = 2;
  EXPECT_TRUE(r.wants(0));
  EXPECT_TRUE(r.wants(2));
  EXPECT_FALSE(r.wants(1));
  EXPECT_TRUE(r.take(0, false)) << "the current rung plays on until the target's keyframe";
  EXPECT_FALSE(r.take(2, false)) << "a delta unit of the target cannot start it";
  EXPECT_TRUE(r.take(2, true));
  EXPECT_EQ(r.current, 2u);
  EXPECT_EQ(r.switches, 1u);
  EXPECT_FALSE(r.take(0, true)) << "the old rung's units stop at once";
  EXPECT_TRUE(r.take(2, false));
  EXPECT_FALSE(r.wants(0));
}

TEST(LayerRequest, NamesARungOrGivesTheChoiceBackToTheEstimate) {
  EXPECT_EQ(parseLayerRequest(R"({"encodingId":"1"})", 3), std::optional<std::size_t>(1));
  EXPECT_EQ(parseLayerRequest(R"({"encodingId":2})", 3), std::optional<std::size_t>(2));
  EXPECT_EQ(parseLayerRequest("{}", 3), std::nullopt);
  EXPECT_EQ(parseLayerRequest(R"({"encodingId":null,"mediaId":"0"})", 3), std::nullopt);
}

TEST(LayerRequest, RefusesWhatIsNotARungSayingWhatIsTaken) {
  for (const char* body :
       {"", "[1]", "{", R"({"encodingId":"3"})", R"({"encodingId":-1})", R"({"encodingId":"x"})",
        R"({"encodingId":1.5})", R"({"encodingId":"99999999999999999999"})"}) {
    try {
      parseLayerRequest(body, 3);
      ADD_FAILURE() << "accepted " << body;
    } catch (const Error& e) {
      EXPECT_EQ(e.code(), Errc::kInvalidArgument) << body;
      EXPECT_NE(std::string(e.what()).find("0 to 2"), std::string::npos) << e.what();
    }
  }
  EXPECT_THROW(parseLayerRequest(std::string(2000, ' ') + "{}", 3), Error) << "a body past 1 KiB";
  EXPECT_THROW(parseLayerRequest("{}", 0), Error) << "no ladder";
}

TEST(LayerRequest, TheAnswerListsTheLadderTheChoiceAndTheRungTakenNow) {
  const auto ladder = renditionLadder("on", 1280, 720, 2500);
  EXPECT_EQ(
      layerJson(ladder, 1, 0),
      R"({"current":0,"encodingId":"1","layers":[{"encodingId":"0","height":720,"maxKbps":2500,"minKbps":1000,"width":1280},)"
      R"({"encodingId":"1","height":360,"maxKbps":1000,"minKbps":375,"width":640},)"
      R"({"encodingId":"2","height":180,"maxKbps":375,"minKbps":125,"width":320}]})");
  EXPECT_NE(layerJson(ladder, std::nullopt, 2).find(R"("encodingId":null)"), std::string::npos);
}

}  // namespace
}  // namespace zerohop::stream
