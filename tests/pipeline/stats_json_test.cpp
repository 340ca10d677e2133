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

// Each viewer's start-up and transport-cc feedback; what has not happened yet is null, not -1.
TEST(StatsJson, ListsEachViewersStartAndFeedback) {
  PipelineStatus s;
  ViewerStats started;
  started.id = "0123abcd";
  started.connected = true;
  started.connectMs = 31.5;
  started.firstFrameMs = 58.25;
  started.twccPacketsReceived = 14;
  started.twccLossPercent = 0;
  ViewerStats negotiating;
  negotiating.id = "feedc0de";
  s.viewerStats = {started, negotiating};
  s.viewers = 2;
  auto doc = nlohmann::json::parse(renderStatsJson(s, StatsContext{"test pattern", "libx264"}));
  ASSERT_EQ(doc["viewer_sessions"].size(), 2u);
  const auto& a = doc["viewer_sessions"][0];
  EXPECT_EQ(a["id"], "0123abcd");
  EXPECT_EQ(a["connected"], true);
  EXPECT_DOUBLE_EQ(a["connect_ms"].get<double>(), 31.5);
  EXPECT_DOUBLE_EQ(a["first_frame_ms"].get<double>(), 58.25);
  EXPECT_EQ(a["twcc_packets_received"], 14);
  EXPECT_DOUBLE_EQ(a["twcc_loss_pct"].get<double>(), 0.0);
  const auto& b = doc["viewer_sessions"][1];
  EXPECT_EQ(b["connected"], false);
  for (const char* key : {"connect_ms", "first_frame_ms", "twcc_packets_received", "twcc_loss_pct", "estimate_kbps",
                          "sent_kbps", "loss_pct", "rtt_ms", "received_kbps"})
    EXPECT_TRUE(b[key].is_null()) << key << ": " << b[key];
}

// Congestion control: the encode's target and output, each viewer's estimate and what it was sent.
TEST(StatsJson, ShowsTheBitrateTargetAndEachViewersEstimate) {
  PipelineStatus s;
  s.bitrate = StreamBitrate{true, 300, 2500, 850, 812.5};
  ViewerStats v;
  v.id = "0123abcd";
  v.estimateKbps = 850;
  v.sentKbps = 790;
  v.lossPercent = 12.5;
  v.rttMs = 41;
  v.receivedKbps = 930;
  s.viewerStats = {v};
  auto doc = nlohmann::json::parse(renderStatsJson(s, StatsContext{"test pattern", "libx264"}));
  EXPECT_EQ(doc["bitrate"]["congestion_control"], true);
  EXPECT_EQ(doc["bitrate"]["min_kbps"], 300);
  EXPECT_EQ(doc["bitrate"]["max_kbps"], 2500);
  EXPECT_EQ(doc["bitrate"]["target_kbps"], 850);
  EXPECT_DOUBLE_EQ(doc["bitrate"]["sent_kbps"].get<double>(), 812.5);
  const auto& a = doc["viewer_sessions"][0];
  EXPECT_DOUBLE_EQ(a["estimate_kbps"].get<double>(), 850);
  EXPECT_DOUBLE_EQ(a["sent_kbps"].get<double>(), 790);
  EXPECT_DOUBLE_EQ(a["loss_pct"].get<double>(), 12.5);
  EXPECT_DOUBLE_EQ(a["rtt_ms"].get<double>(), 41);
  EXPECT_DOUBLE_EQ(a["received_kbps"].get<double>(), 930);
}

}  // namespace
}  // namespace zerohop
