#include "stats_json.hpp"

#include <nlohmann/json.hpp>

namespace zerohop {
namespace {

nlohmann::json percentilesJson(const Percentiles& p) {
  return {{"p50_ms", p.p50Ms}, {"p99_ms", p.p99Ms}, {"samples", p.samples}};
}

}  // namespace

std::string renderStatsJson(const PipelineStatus& s, const StatsContext& ctx) { return statsDocument(s, ctx).dump(); }

nlohmann::json statsDocument(const PipelineStatus& s, const StatsContext& ctx) {
  nlohmann::json stages = nlohmann::json::object();
  for (std::size_t i = 1; i < kStageCount; ++i) {
    if (s.latency.stage[i].samples == 0) continue;
    stages[stageName(static_cast<Stage>(i))] = percentilesJson(s.latency.stage[i]);
  }
  nlohmann::json viewerSessions = nlohmann::json::array();
  auto orNull = [](double v) { return v < 0 ? nlohmann::json(nullptr) : nlohmann::json(v); };
  for (const ViewerStats& v : s.viewerStats) {
    viewerSessions.push_back(
        {{"id", v.id},
         {"connected", v.connected},
         {"connect_ms", orNull(v.connectMs)},
         {"first_frame_ms", orNull(v.firstFrameMs)},
         {"twcc_packets_received",
          v.twccPacketsReceived < 0 ? nlohmann::json(nullptr) : nlohmann::json(v.twccPacketsReceived)},
         {"twcc_loss_pct", orNull(v.twccLossPercent)},
         {"codec", v.codec},
         {"h264_level_offered",
          v.h264LevelOffered.empty() ? nlohmann::json(nullptr) : nlohmann::json(v.h264LevelOffered)},
         {"h264_level_sent",
          v.h264LevelSent.empty() ? nlohmann::json(nullptr) : nlohmann::json(v.h264LevelSent)},
         {"level_covered",
          v.levelCovered < 0 ? nlohmann::json(nullptr) : nlohmann::json(v.levelCovered == 1)},
         {"estimate_kbps", orNull(v.estimateKbps)},
         {"sent_kbps", orNull(v.sentKbps)},
         {"loss_pct", orNull(v.lossPercent)},
         {"rtt_ms", orNull(v.rttMs)},
         {"received_kbps", orNull(v.receivedKbps)},
         {"playout_delay_ms", v.playoutDelayMinMs < 0
                                  ? nlohmann::json(nullptr)
                                  : nlohmann::json({v.playoutDelayMinMs, v.playoutDelayMaxMs})},
         {"encode_target_kbps", orNull(v.encodeTargetKbps)},
         {"rung", v.rung < 0 ? nlohmann::json(nullptr) : nlohmann::json(v.rung)},
         {"rung_switches", v.rungSwitches},
         {"inbound_dropped", v.inboundDropped},
         {"repairs", v.repairs},
         {"repairs_twice", v.repairsTwice},
         {"repairs_passed_over", v.repairsPassedOver}});
  }
  auto ladderJson = [](const std::vector<RenditionStatus>& ladder) {
    nlohmann::json out = nlohmann::json::array();
    for (std::size_t i = 0; i < ladder.size(); ++i) {
      const RenditionStatus& r = ladder[i];
      out.push_back(
          {{"rung", i},
           {"width", r.size.width},
           {"height", r.size.height},
           {"min_kbps", r.size.minKbps},
           {"max_kbps", r.size.maxKbps},
           {"running", r.running},
           {"starts", r.starts},
           {"units", r.units},
           {"keyframes", r.keyframes},
           {"keyframes_forced", r.keyframesForced},
           {"viewers", r.viewers},
           {"switches", r.switches},
           {"encoder_kbps", r.encoderKbps},
           {"encoder", i == 0 || r.encoder.empty() ? nlohmann::json(nullptr) : nlohmann::json(r.encoder)},
           {"encode_cpu_ms_mean", i > 0 && r.units > 0
                                      ? nlohmann::json(r.encodeCpuNs / 1e6 / static_cast<double>(r.units))
                                      : nlohmann::json(nullptr)}});
    }
    return out;
  };
  nlohmann::json vp8Stages = nlohmann::json::object();
  for (std::size_t i = 1; i < kStageCount; ++i) {
    if (s.vp8.latency.stage[i].samples == 0) continue;
    vp8Stages[stageName(static_cast<Stage>(i))] = percentilesJson(s.vp8.latency.stage[i]);
  }
  const double vp8Frames = static_cast<double>(s.vp8.encoder.framesIn);
  nlohmann::json vp8 = {
      {"available", s.vp8.available},
      {"running", s.vp8.running},
      {"encoder", s.vp8.encoderName},
      {"starts", s.vp8.starts},
      {"frames", s.vp8.encoder.framesIn},
      {"units", s.vp8.encoder.unitsOut},
      {"keyframes", s.vp8.encoder.keyframes},
      {"bytes", s.vp8.encoder.bytesOut},
      {"fps", s.vp8.latency.fps},
      {"encode_cpu_ms_mean", vp8Frames > 0 ? nlohmann::json(s.vp8.encodeCpuNs / 1e6 / vp8Frames) : nlohmann::json(nullptr)},
      {"encode_wall_ms_mean", vp8Frames > 0 ? nlohmann::json(s.vp8.encodeWallNs / 1e6 / vp8Frames) : nlohmann::json(nullptr)},
      {"stages", vp8Stages},
      {"total", percentilesJson(s.vp8.latency.total)},
      {"bitrate", {{"target_kbps", s.vp8.bitrate.targetKbps},
                   {"encoder_kbps", s.vp8.encoderKbps},
                   {"sent_kbps", s.vp8.bitrate.sentKbps}}},
  };
  if (!s.vp8.available) vp8["unavailable"] = s.vp8.unavailableReason;
  nlohmann::json passthroughDecode = nullptr;  // null where the frames are not passed through
  if (ctx.path == "passthrough") {
    const PassthroughDecodeStatus& d = s.passthroughDecode;
    passthroughDecode = {
        {"available", d.available},
        {"running", d.running},
        {"decoder", d.decoder},
        {"starts", d.starts},
        {"pictures", d.pictures},
        {"caught_up_units", d.caughtUpUnits},
        {"errors", d.errors},
        {"behind", d.behind},
        {"decode_ms", {{"p50", d.decodeMsP50}, {"p99", d.decodeMsP99}}},
        {"cpu_ms_per_picture", d.pictures > 0
                                   ? nlohmann::json(d.decodeCpuNs / 1e6 / static_cast<double>(d.pictures))
                                   : nlohmann::json(nullptr)}};
    if (!d.available) passthroughDecode["unavailable"] = d.unavailableReason;
  }
  nlohmann::json recording = nullptr;  // null without a recording
  if (!s.recording.path.empty()) {
    recording = {{"path", s.recording.path},
                 {"current_file", s.recording.currentPath},
                 {"files", s.recording.files},
                 {"units", s.recording.units},
                 {"audio_packets", s.recording.audioPackets},
                 {"bytes", s.recording.bytes},
                 {"recorded_s", s.recording.recordedSeconds},
                 {"dropped", s.recording.dropped},
                 {"error", s.recording.error}};
  }
  nlohmann::json doc = {
      {"source", ctx.source},
      {"encoder", ctx.encoder},
      {"path", ctx.path},
      {"fps", s.latency.fps},
      {"frames", s.latency.frames},
      {"drops", s.source.drops + s.queueDrops},
      {"source_drops", s.source.drops},
      {"encoder_queue_drops", s.queueDrops},
      {"source_errors", s.source.errors},
      {"capture_clock", captureOriginName(s.source.captureOrigin)},
      {"keyframes_forced", s.keyframesForced},
      {"held_back_until_idr", s.heldBackUntilIdr},
      {"viewers", s.viewers},
      {"viewer_sessions", viewerSessions},
      {"bitrate",
       {{"congestion_control", s.bitrate.congestionControl},
        {"min_kbps", s.bitrate.minKbps},
        {"max_kbps", s.bitrate.maxKbps},
        {"target_kbps", s.bitrate.targetKbps},
        {"sent_kbps", s.bitrate.sentKbps}}},
      {"share_readers", s.shareReaders},
      {"stages", stages},
      {"total", percentilesJson(s.latency.total)},
      {"vp8", vp8},
      {"passthrough_decode", passthroughDecode},
      {"renditions", ladderJson(s.renditions)},
      {"vp8_renditions", ladderJson(s.vp8Renditions)},
      {"recording", recording},
      {"keyframe_wait",
       {{"count", s.keyframeWait.count},
        {"p50_ms", s.keyframeWait.wait.p50Ms},
        {"p99_ms", s.keyframeWait.wait.p99Ms},
        {"max_ms", s.keyframeWait.maxMs},
        {"samples", s.keyframeWait.wait.samples},
        {"idr_interval", percentilesJson(s.keyframeWait.idrInterval)}}},
      {"uptime_s", s.uptimeSeconds},
      {"stage_note", "each stage: ms from the previous stage to this one; total: capture -> send"},
      {"viewer_sessions_note",
       "per viewer, ms from its POST /whep: connect_ms to ICE+DTLS connected, "
       "first_frame_ms to the first RTP packet of its first keyframe sent; twcc_*: its transport-cc feedback "
       "over the last window; estimate_kbps: congestion control's estimate for it, sent_kbps: the RTP rate "
       "sent to it, "
       "loss_pct/rtt_ms/received_kbps: what its feedback said; codec: H264, or VP8 when its offer had no "
       "usable H.264, "
       "none when it asked for the sound alone; "
       "encode_target_kbps: the target of the encode it receives (its codec's); h264_level_offered: the "
       "level of "
       "the profile-level-id it offered (and we answered), h264_level_sent: the stream's level (its SPS) "
       "when it "
       "joined, level_covered: false when we send above its offered level (null: not known); "
       "playout_delay_ms: [min, max] the RTP playout-delay asks of its browser now (raised while its "
       "lost packets come back one long round trip later; null: not sent); rung: the rendition it "
       "receives (0 = full size; VP8 viewers too where the rungs are made in VP8; null: none yet), "
       "rung_switches: its moves between rungs; "
       "inbound_dropped: packets from the viewer dropped before SRTP decryption (any RTP, RTCP "
       "from sender SSRCs past its first four)"},
      {"renditions_note",
       "the ladder of renditions (the renditions setting; empty: one encode): rung 0 is the main encode, "
       "each lower "
       "rung the same frame scaled and encoded again, running only while a viewer is on it; "
       "encode_cpu_ms_mean: the encode thread's CPU per unit (scale + encode; rung 0: see stages); units, "
       "keyframes: what it made; keyframes_forced: of them, forced by its own viewers' requests "
       "(a viewer's PLI/FIR reaches only its rung's encode, each rung rate-limited alone); viewers: on it "
       "now; "
       "switches: viewers' moves onto it so far; encoder: a lower rung's running encoder (h264_nvenc beside "
       "an NVENC rung 0 where its session opened, else libx264; null for rung 0 and while stopped); with a "
       "ladder, "
       "encode_target_kbps is the target of the viewer's rung; vp8_renditions: the same ladder encoded by "
       "libvpx for the VP8 viewers (rung 0: the VP8 encode above), each rung only while one is on it"},
      {"vp8_note",
       "the VP8 encode for viewers without H.264: runs only while one watches; encode_cpu_ms_mean is "
       "the encode thread's CPU per VP8 frame; its stages' encode includes the H.264 encode and send "
       "that precede it; bitrate: its own congestion control target (the weakest VP8 viewer), "
       "encoder_kbps: what the running encoder codes for, sent_kbps: what it made over the last second"},
      {"passthrough_decode_note",
       "passthrough only (else null): the camera's H.264 decoded beside the units the viewers get, for the "
       "frame share's readers and VP8 viewers, only while one is there (running); a start decodes the units "
       "since the last IDR (caught_up_units) so the first picture comes at once; errors: units the decoder "
       "refused, behind: times it fell behind the camera (each waits for the next IDR); cpu_ms_per_picture: "
       "the pictures thread's CPU (decodes, catch-up and the share's copy) per picture"},
      {"capture_clock_note",
       "where each frame's capture instant, the start of the stages and of total, comes from: local (this "
       "host stamped it: a V4L2 buffer, the test camera, a share), camera (an IP camera's own clock, from "
       "its RTCP sender reports: its encode and the network are inside the figures), arrival (an IP "
       "camera before its first sender report, or whose clock is off from this host's: they are not)"},
      {"keyframe_wait_note",
       "viewers' waits for a keyframe the source cannot be asked for (a camera passed through "
       "without a keyframe control, e.g. RTSP): each from the first request not honoured (a viewer's "
       "start, its PLI/FIR; requests while one runs join it) to the next IDR sent; count and max_ms "
       "since start, p50/p99 over the last 64 (samples); idr_interval: ms between the IDRs sent, "
       "which bounds the wait; count 0 where requests are honoured (our encodes force an IDR)"},
      {"bitrate_note",
       "the H.264 encode follows its weakest H.264 viewer's estimate between min_kbps and max_kbps "
       "(target_kbps; VP8 viewers count for vp8.bitrate only); sent_kbps: what the encoder made over the "
       "last second"},
  };
  return doc;
}

}  // namespace zerohop
