#include "stats_json.hpp"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "core/latency_stats.hpp"
#include "status_line.hpp"

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
  EXPECT_EQ(doc["capture_clock"], "local");
  EXPECT_EQ(nlohmann::json::parse(renderStatsJson(s, StatsContext{"test pattern", "libx264", "gpu"}))["path"], "gpu");
  s.source.captureOrigin = CaptureOrigin::kCamera;
  EXPECT_EQ(nlohmann::json::parse(renderStatsJson(s, StatsContext{"rtsp", "passthrough"}))["capture_clock"],
            "camera");
  s.source.captureOrigin = CaptureOrigin::kArrival;
  EXPECT_EQ(nlohmann::json::parse(renderStatsJson(s, StatsContext{"rtsp", "passthrough"}))["capture_clock"],
            "arrival");
  const auto line = cli::renderStatusLine(s);
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
                          "sent_kbps", "loss_pct", "rtt_ms", "received_kbps", "encode_target_kbps"})
    EXPECT_TRUE(b[key].is_null()) << key << ": " << b[key];
}

// The codec each viewer gets, and the VP8 encode's own counters: CPU per frame from its totals, its
// stages; why it is unavailable when it is.
TEST(StatsJson, ShowsEachViewersCodecAndTheVp8Encode) {
  PipelineStatus s;
  ViewerStats h264, vp8;
  h264.id = "00000001";
  vp8.id = "00000002";
  vp8.codec = "VP8";
  h264.h264LevelOffered = "3.1";
  h264.h264LevelSent = "4.0";
  h264.levelCovered = 0;
  s.viewerStats = {h264, vp8};
  s.vp8.available = true;
  s.vp8.running = true;
  s.vp8.encoderName = "libvpx VP8 (realtime, cpu-used 8, CBR 2500 kb/s)";
  s.vp8.starts = 1;
  s.vp8.encoder.framesIn = 100;
  s.vp8.encoder.keyframes = 2;
  s.vp8.encodeCpuNs = 1'000'000'000;  // 10 ms a frame
  s.vp8.encodeWallNs = 1'200'000'000;
  LatencyStats stats;
  StageTimes t;
  t.mark(Stage::kCapture, 1'000'000'000LL);
  t.mark(Stage::kEncode, t.at(Stage::kCapture) + 20'000'000);
  t.mark(Stage::kSend, t.at(Stage::kEncode) + 1'000'000);
  stats.record(t);
  s.vp8.latency = stats.snapshot();
  auto doc = nlohmann::json::parse(renderStatsJson(s, StatsContext{"test pattern", "libx264"}));
  EXPECT_EQ(doc["viewer_sessions"][0]["codec"], "H264");
  EXPECT_EQ(doc["viewer_sessions"][1]["codec"], "VP8");
  EXPECT_EQ(doc["viewer_sessions"][0]["h264_level_offered"], "3.1");
  EXPECT_EQ(doc["viewer_sessions"][0]["h264_level_sent"], "4.0");
  EXPECT_EQ(doc["viewer_sessions"][0]["level_covered"], false);
  EXPECT_TRUE(doc["viewer_sessions"][1]["h264_level_offered"].is_null());
  EXPECT_TRUE(doc["viewer_sessions"][1]["level_covered"].is_null());
  const auto& v = doc["vp8"];
  EXPECT_EQ(v["running"], true);
  EXPECT_EQ(v["starts"], 1);
  EXPECT_EQ(v["frames"], 100);
  EXPECT_EQ(v["keyframes"], 2);
  EXPECT_DOUBLE_EQ(v["encode_cpu_ms_mean"].get<double>(), 10.0);
  EXPECT_DOUBLE_EQ(v["encode_wall_ms_mean"].get<double>(), 12.0);
  EXPECT_DOUBLE_EQ(v["stages"]["encode"]["p50_ms"].get<double>(), 20.0);
  EXPECT_FALSE(v.contains("unavailable"));

  PipelineStatus passthrough;
  passthrough.vp8.unavailableReason = "the camera's H.264 is passed through undecoded";
  auto off = nlohmann::json::parse(
      renderStatsJson(passthrough, StatsContext{"h264 camera", "passthrough", "passthrough"}))["vp8"];
  EXPECT_EQ(off["available"], false);
  EXPECT_EQ(off["running"], false);
  EXPECT_EQ(off["unavailable"], passthrough.vp8.unavailableReason);
  EXPECT_TRUE(off["encode_cpu_ms_mean"].is_null());
  EXPECT_TRUE(doc["passthrough_decode"].is_null()) << "not passed through: no passthrough decode";
}

// Passthrough's pictures: the decode beside the camera's H.264, per picture.
TEST(StatsJson, ShowsThePassthroughDecode) {
  PipelineStatus s;
  PassthroughDecodeStatus& d = s.passthroughDecode;
  d.available = true;
  d.running = true;
  d.decoder = "libavcodec H.264 (CPU)";
  d.starts = 2;
  d.pictures = 200;
  d.caughtUpUnits = 28;
  d.errors = 1;
  d.behind = 3;
  d.decodeMsP50 = 0.5;
  d.decodeMsP99 = 3.5;
  d.decodeCpuNs = 200'000'000;
  auto doc =
      nlohmann::json::parse(renderStatsJson(s, StatsContext{"h264 camera", "passthrough", "passthrough"}));
  const auto& j = doc["passthrough_decode"];
  EXPECT_EQ(j["running"], true);
  EXPECT_EQ(j["decoder"], "libavcodec H.264 (CPU)");
  EXPECT_EQ(j["starts"], 2);
  EXPECT_EQ(j["pictures"], 200);
  EXPECT_EQ(j["caught_up_units"], 28);
  EXPECT_EQ(j["errors"], 1);
  EXPECT_EQ(j["behind"], 3);
  EXPECT_DOUBLE_EQ(j["decode_ms"]["p99"].get<double>(), 3.5);
  EXPECT_DOUBLE_EQ(j["cpu_ms_per_picture"].get<double>(), 1.0);
  EXPECT_FALSE(j.contains("unavailable"));
  d.available = false;
  d.unavailableReason = "no H.264 decoder in this FFmpeg";
  doc = nlohmann::json::parse(renderStatsJson(s, StatsContext{"h264 camera", "passthrough", "passthrough"}));
  EXPECT_EQ(doc["passthrough_decode"]["unavailable"], d.unavailableReason);
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

// One target per encode: the H.264 one at the top, the VP8 one under vp8, each viewer's own codec's.
TEST(StatsJson, ShowsTheVp8EncodesOwnTargetAndEachViewersEncodeTarget) {
  PipelineStatus s;
  s.bitrate = StreamBitrate{true, 300, 2500, 2400, 2380};
  s.vp8.running = true;
  s.vp8.encoderKbps = 640;
  s.vp8.bitrate = StreamBitrate{true, 300, 2500, 650, 610};
  ViewerStats h264, vp8;
  h264.encodeTargetKbps = 2400;
  vp8.codec = "VP8";
  vp8.encodeTargetKbps = 650;
  s.viewerStats = {h264, vp8};
  auto doc = nlohmann::json::parse(renderStatsJson(s, StatsContext{"test pattern", "libx264"}));
  EXPECT_EQ(doc["bitrate"]["target_kbps"], 2400);
  EXPECT_EQ(doc["vp8"]["bitrate"]["target_kbps"], 650);
  EXPECT_EQ(doc["vp8"]["bitrate"]["encoder_kbps"], 640);
  EXPECT_DOUBLE_EQ(doc["vp8"]["bitrate"]["sent_kbps"].get<double>(), 610);
  EXPECT_DOUBLE_EQ(doc["viewer_sessions"][0]["encode_target_kbps"].get<double>(), 2400);
  EXPECT_DOUBLE_EQ(doc["viewer_sessions"][1]["encode_target_kbps"].get<double>(), 650);
}

// What each viewer sent that was dropped unread (issue 33's junk flood): a count, 0 for a quiet viewer.
TEST(StatsJson, ShowsEachViewersDroppedInboundPackets) {
  PipelineStatus s;
  ViewerStats quiet, flooding;
  flooding.inboundDropped = 150000;
  s.viewerStats = {quiet, flooding};
  auto doc = nlohmann::json::parse(renderStatsJson(s, StatsContext{"test pattern", "libx264"}));
  EXPECT_EQ(doc["viewer_sessions"][0]["inbound_dropped"], 0);
  EXPECT_EQ(doc["viewer_sessions"][1]["inbound_dropped"], 150000);
}

// Each viewer's repairs: the NACKed packets resent (and of those sent twice) and those passed over.
TEST(StatsJson, ShowsEachViewersRepairs) {
  PipelineStatus s;
  ViewerStats v;
  v.repairs = 120;
  v.repairsTwice = 118;
  v.repairsPassedOver = 3;
  s.viewerStats = {v};
  auto doc = nlohmann::json::parse(renderStatsJson(s, StatsContext{"test pattern", "libx264"}));
  EXPECT_EQ(doc["viewer_sessions"][0]["repairs"], 120);
  EXPECT_EQ(doc["viewer_sessions"][0]["repairs_twice"], 118);
  EXPECT_EQ(doc["viewer_sessions"][0]["repairs_passed_over"], 3);
}

}  // namespace
}  // namespace zerohop
