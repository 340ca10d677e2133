#include "core/latency_stats.hpp"

#include <gtest/gtest.h>

namespace zerohop {
namespace {

TEST(Percentiles, NearestRank) {
  std::vector<double> v;
  for (int i = 1; i <= 100; ++i) v.push_back(i);
  auto p = percentiles(v);
  EXPECT_DOUBLE_EQ(p.p50Ms, 50);
  EXPECT_DOUBLE_EQ(p.p99Ms, 99);
  EXPECT_EQ(p.samples, 100u);
  EXPECT_EQ(percentiles({}).samples, 0u);
}

TEST(LatencyStats, PerStageIntervalsAndFps) {
  LatencyStats stats(100);
  for (int i = 0; i < 31; ++i) {
    StageTimes t;
    const std::int64_t base = i * 33'333'333LL;
    t.mark(Stage::kCapture, base + 1);
    t.mark(Stage::kConvert, base + 1 + 2'000'000);   // 2 ms after capture (ingest skipped)
    t.mark(Stage::kEncode, base + 1 + 7'000'000);    // 5 ms encode
    t.mark(Stage::kSend, base + 1 + 7'500'000);
    stats.record(t);
  }
  stats.addDrops(3);
  auto s = stats.snapshot();
  EXPECT_EQ(s.frames, 31u);
  EXPECT_EQ(s.drops, 3u);
  EXPECT_EQ(s.stage[static_cast<int>(Stage::kIngest)].samples, 0u);
  EXPECT_NEAR(s.stage[static_cast<int>(Stage::kConvert)].p50Ms, 2.0, 1e-6);
  EXPECT_NEAR(s.stage[static_cast<int>(Stage::kEncode)].p50Ms, 5.0, 1e-6);
  EXPECT_NEAR(s.total.p99Ms, 7.5, 1e-6);
  EXPECT_NEAR(s.fps, 30.0, 0.01);
}

}  // namespace
}  // namespace zerohop

namespace zerohop {
namespace {

TEST(LatencyStats, CumulativeHistogramsCountEveryFrame) {
  LatencyStats stats(4);  // the window is small; histograms are since start
  for (int i = 0; i < 10; ++i) {
    StageTimes t;
    t.mark(Stage::kCapture, 1'000'000'000LL * (i + 1));
    t.mark(Stage::kEncode, t.at(Stage::kCapture) + (i < 5 ? 3'000'000 : 30'000'000));  // 3 ms or 30 ms
    stats.record(t);
  }
  const auto s = stats.snapshot();
  const auto& h = s.stageHistogram[static_cast<int>(Stage::kEncode)];
  EXPECT_EQ(h.counts.back(), 10u);
  EXPECT_EQ(h.counts[4], 5u) << "bucket <= 5 ms";
  EXPECT_EQ(h.counts[7], 10u) << "bucket <= 35 ms";
  EXPECT_DOUBLE_EQ(h.sumMs, 5 * 3.0 + 5 * 30.0);
  EXPECT_EQ(s.totalHistogram.counts.back(), 10u);
  EXPECT_EQ(s.stage[static_cast<int>(Stage::kEncode)].samples, 4u) << "percentiles stay over the window";
}

}  // namespace
}  // namespace zerohop
