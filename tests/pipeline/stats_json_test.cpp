#include "stats_json.hpp"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

namespace zerohop {
namespace {

TEST(StatsJson, CarriesStagesTotalsAndCounters) {
  LatencyStats stats;
  for (int i = 0; i < 10; ++i) {
    StageTimes t;
    t.mark(Stage::kCapture, 1'000'000'000LL + i * 33'000'000LL);
    t.mark(Stage::kIngest, t.at(Stage::kCapture) + 1'000'000);
    t.mark(Stage::kConvert, t.at(Stage::kIngest) + 2'000'000);
    t.mark(Stage::kEncode, t.at(Stage::kConvert) + 4'000'000);
    t.mark(Stage::kSend, t.at(Stage::kEncode) + 500'000);
    stats.record(t);
  }
  PipelineStatus s;
  s.latency = stats.snapshot();
  s.source.drops = 2;
  s.queueDrops = 1;
  s.viewers = 3;
  auto doc = nlohmann::json::parse(renderStatsJson(s, StatsContext{"test pattern", "libx264"}));
  EXPECT_EQ(doc["viewers"], 3);
  EXPECT_EQ(doc["drops"], 3);
  EXPECT_EQ(doc["frames"], 10);
  EXPECT_DOUBLE_EQ(doc["stages"]["convert"]["p50_ms"].get<double>(), 2.0);
  EXPECT_DOUBLE_EQ(doc["stages"]["encode"]["p99_ms"].get<double>(), 4.0);
  EXPECT_DOUBLE_EQ(doc["total"]["p50_ms"].get<double>(), 7.5);
  EXPECT_FALSE(doc["stages"].contains("capture"));
  EXPECT_EQ(doc["path"], "cpu");
  EXPECT_EQ(nlohmann::json::parse(renderStatsJson(s, StatsContext{"test pattern", "libx264", "gpu"}))["path"], "gpu");
  const auto line = renderStatusLine(s);
  EXPECT_NE(line.find("viewers 3"), std::string::npos) << line;
  EXPECT_NE(line.find("p50 7.5 ms"), std::string::npos) << line;
}

}  // namespace
}  // namespace zerohop
