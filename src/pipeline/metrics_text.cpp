#include "metrics_text.hpp"

#include <algorithm>
#include <cstdio>
#include <sstream>
#include <string>

#include "zerohop/version.hpp"

namespace zerohop {
namespace {

std::string escapeLabel(const std::string& v) {
  std::string out;
  for (char c : v) {
    if (c == '\\' || c == '"') out += '\\';
    if (c == '\n') {
      out += "\\n";
      continue;
    }
    out += c;
  }
  return out;
}

std::string num(double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.9g", v);
  return buf;
}

void header(std::ostringstream& os, const char* name, const char* type, const char* help) {
  os << "# HELP " << name << ' ' << help << "\n# TYPE " << name << ' ' << type << '\n';
}

void histogram(std::ostringstream& os, const char* name, const std::string& labels, const LatencyHistogram& h) {
  const std::string sep = labels.empty() ? "" : ",";
  for (std::size_t i = 0; i < kLatencyBucketsMs.size(); ++i) {
    os << name << "_bucket{" << labels << sep << "le=\"" << num(kLatencyBucketsMs[i] / 1000.0) << "\"} "
       << h.counts[i] << '\n';
  }
  os << name << "_bucket{" << labels << sep << "le=\"+Inf\"} " << h.counts.back() << '\n';
  os << name << "_sum" << (labels.empty() ? "" : "{" + labels + "}") << ' ' << num(h.sumMs / 1000.0) << '\n';
  os << name << "_count" << (labels.empty() ? "" : "{" + labels + "}") << ' ' << h.counts.back() << '\n';
}

// One family's samples: its header once, then a line per camera (Prometheus wants each family's
// lines together). `line(os, labels, status)` writes the camera's sample(s); labels is "" or
// `camera="NAME"` and more labels follow it after a comma.
template <typename Line>
void family(std::ostringstream& os, const std::vector<CameraMetrics>& cams, const char* name, const char* type,
            const char* help, Line line) {
  header(os, name, type, help);
  for (const auto& c : cams) {
    if (!c.status) continue;
    line(c.camera.empty() ? std::string{} : "camera=\"" + escapeLabel(c.camera) + "\"", *c.status, c.context);
  }
}

std::string braces(const std::string& labels) { return labels.empty() ? "" : "{" + labels + "}"; }
std::string withLabel(const std::string& labels, const std::string& more) {
  return "{" + labels + (labels.empty() ? "" : ",") + more + "}";
}

}  // namespace

std::string renderMetricsText(const PipelineStatus& s, const StatsContext& ctx) {
  return renderMetricsText(std::vector<CameraMetrics>{CameraMetrics{{}, s, ctx}});
}

std::string renderMetricsText(const std::vector<CameraMetrics>& cams) {
  std::ostringstream os;
  using L = const std::string&;
  using S = const PipelineStatus&;
  using C = const StatsContext&;
  family(os, cams, "zerohop_info", "gauge", "Build and pipeline description (always 1).", [&](L l, S, C ctx) {
    os << "zerohop_info" << withLabel(l, std::string("version=\"") + kVersion + "\",source=\"" + escapeLabel(ctx.source) +
                                             "\",encoder=\"" + escapeLabel(ctx.encoder) + "\",path=\"" +
                                             escapeLabel(ctx.path) + "\"")
       << " 1\n";
  });
  const bool named = std::any_of(cams.begin(), cams.end(), [](const CameraMetrics& c) { return !c.camera.empty(); });
  if (named) {
    header(os, "zerohop_camera_up", "gauge", "1 while the camera's pipeline runs, 0 while it is opened or retried.");
    for (const auto& c : cams) os << "zerohop_camera_up{camera=\"" << escapeLabel(c.camera) << "\"} " << (c.status ? 1 : 0) << '\n';
    header(os, "zerohop_camera_restarts_total", "counter", "Times the camera's pipeline failed and was opened again.");
    for (const auto& c : cams) os << "zerohop_camera_restarts_total{camera=\"" << escapeLabel(c.camera) << "\"} " << c.restarts << '\n';
  }
  family(os, cams, "zerohop_frames_total", "counter", "Frames encoded and handed to the WebRTC sender.",
         [&](L l, S s, C) { os << "zerohop_frames_total" << braces(l) << ' ' << s.latency.frames << '\n'; });
  family(os, cams, "zerohop_dropped_frames_total", "counter", "Frames dropped, by where they were dropped.",
         [&](L l, S s, C) {
           os << "zerohop_dropped_frames_total" << withLabel(l, "where=\"source\"") << ' ' << s.source.drops << '\n';
           os << "zerohop_dropped_frames_total" << withLabel(l, "where=\"encoder_queue\"") << ' ' << s.queueDrops << '\n';
         });
  family(os, cams, "zerohop_source_errors_total", "counter", "Frames the source rejected (error-flagged, corrupt).",
         [&](L l, S s, C) { os << "zerohop_source_errors_total" << braces(l) << ' ' << s.source.errors << '\n'; });
  family(os, cams, "zerohop_source_stalls_total", "counter",
         "Periods with no frame from the source for several intervals.",
         [&](L l, S s, C) { os << "zerohop_source_stalls_total" << braces(l) << ' ' << s.source.stalls << '\n'; });
  family(os, cams, "zerohop_keyframes_forced_total", "counter", "IDR frames forced by viewer requests.",
         [&](L l, S s, C) { os << "zerohop_keyframes_forced_total" << braces(l) << ' ' << s.keyframesForced << '\n'; });
  family(os, cams, "zerohop_passthrough_held_back_total", "counter",
         "Camera units not sent because one they refer to was lost, until the camera's next IDR.",
         [&](L l, S s, C) {
           os << "zerohop_passthrough_held_back_total" << braces(l) << ' ' << s.heldBackUntilIdr << '\n';
         });
  family(os, cams, "zerohop_keyframe_wait_seconds", "summary",
         "Viewers' waits for an IDR the source cannot be asked for (passthrough without a keyframe control: "
         "RTSP), from the request to the next IDR sent; quantiles over the last 64 waits.",
         [&](L l, S s, C) {
           const KeyframeWaitStatus& w = s.keyframeWait;
           os << "zerohop_keyframe_wait_seconds" << withLabel(l, "quantile=\"0.5\"") << ' ' << num(w.wait.p50Ms / 1000.0) << '\n';
           os << "zerohop_keyframe_wait_seconds" << withLabel(l, "quantile=\"0.99\"") << ' ' << num(w.wait.p99Ms / 1000.0) << '\n';
           os << "zerohop_keyframe_wait_seconds" << withLabel(l, "quantile=\"1\"") << ' ' << num(w.maxMs / 1000.0) << '\n';
           os << "zerohop_keyframe_wait_seconds_sum" << braces(l) << ' ' << num(w.sumMs / 1000.0) << '\n';
           os << "zerohop_keyframe_wait_seconds_count" << braces(l) << ' ' << w.count << '\n';
         });
  family(os, cams, "zerohop_idr_interval_seconds", "gauge",
         "The source's IDR interval as sent (median of the last 64), 0 before two IDRs.",
         [&](L l, S s, C) { os << "zerohop_idr_interval_seconds" << braces(l) << ' ' << num(s.keyframeWait.idrInterval.p50Ms / 1000.0) << '\n'; });
  family(os, cams, "zerohop_viewers", "gauge", "WebRTC viewers connected now.",
         [&](L l, S s, C) { os << "zerohop_viewers" << braces(l) << ' ' << s.viewers << '\n'; });
  family(os, cams, "zerohop_vp8_encode_running", "gauge",
         "1 while the VP8 encode runs (a viewer whose offer has no usable H.264 watches), else 0.",
         [&](L l, S s, C) { os << "zerohop_vp8_encode_running" << braces(l) << ' ' << (s.vp8.running ? 1 : 0) << '\n'; });
  family(os, cams, "zerohop_vp8_frames_total", "counter", "Frames the VP8 encode took, over every run.",
         [&](L l, S s, C) { os << "zerohop_vp8_frames_total" << braces(l) << ' ' << s.vp8.encoder.framesIn << '\n'; });
  family(os, cams, "zerohop_passthrough_pictures_total", "counter",
         "Pictures decoded beside a passed-through camera's H.264 for the frame share and VP8 viewers (0 on "
         "the other paths).",
         [&](L l, S s, C) {
           os << "zerohop_passthrough_pictures_total" << braces(l) << ' ' << s.passthroughDecode.pictures
              << '\n';
         });
  // Renditions (serve --renditions): a series per camera, codec and rung, only where a camera has a
  // ladder (codec "VP8": the ladder's VP8 encodes, where it is made in VP8 too).
  const bool ladder = std::any_of(cams.begin(), cams.end(), [](const CameraMetrics& c) { return c.status && !c.status->renditions.empty(); });
  if (ladder) {
    const auto perRung = [&](const char* name, const char* type, const char* help, auto value) {
      family(os, cams, name, type, help, [&](L l, S s, C) {
        for (const auto& [codec, rungs] :
             {std::pair{"H264", &s.renditions}, std::pair{"VP8", &s.vp8Renditions}}) {
          for (std::size_t r = 0; r < rungs->size(); ++r) {
            const RenditionStatus& rung = (*rungs)[r];
            os << name
               << withLabel(l, std::string("codec=\"") + codec + "\",rung=\"" + std::to_string(r) +
                                   "\",size=\"" + std::to_string(rung.size.width) + "x" +
                                   std::to_string(rung.size.height) + "\"")
               << ' ' << value(rung) << '\n';
          }
        }
      });
    };
    using R = const RenditionStatus&;
    perRung("zerohop_rendition_viewers", "gauge", "Viewers whose track takes this rung of the ladder now.",
            [](R r) { return std::to_string(r.viewers); });
    perRung("zerohop_rendition_bitrate_bits_per_second", "gauge",
            "The bitrate this rung's encoder codes for now (its viewers' weakest estimate in its range); 0 while it does not run.",
            [](R r) { return std::to_string(std::uint64_t{r.encoderKbps} * 1000); });
    perRung("zerohop_rendition_frames_total", "counter", "Units this rung's encode made, over every run.",
            [](R r) { return std::to_string(r.units); });
    perRung("zerohop_rendition_keyframes_total", "counter", "Keyframes (IDR) this rung's encode made.",
            [](R r) { return std::to_string(r.keyframes); });
    perRung("zerohop_rendition_keyframes_forced_total", "counter",
            "Keyframes forced on this rung by its own viewers' requests (PLI/FIR, a move onto it).",
            [](R r) { return std::to_string(r.keyframesForced); });
    perRung("zerohop_rendition_switches_total", "counter", "Viewers' moves onto this rung (each at its keyframe).",
            [](R r) { return std::to_string(r.switches); });
  }
  // Sound (serve --audio): a series per camera that has it, only where one has.
  if (std::any_of(cams.begin(), cams.end(), [](const CameraMetrics& c) { return c.audio.has_value(); })) {
    const auto perAudio = [&](const char* name, const char* type, const char* help, auto value) {
      header(os, name, type, help);
      for (const auto& c : cams) {
        if (c.audio) os << name << braces(c.camera.empty() ? std::string{} : "camera=\"" + escapeLabel(c.camera) + "\"")
                        << ' ' << value(*c.audio) << '\n';
      }
    };
    using A = const AudioMetrics&;
    perAudio("zerohop_audio_running", "gauge", "1 while the camera's sound is captured and encoded, else 0.",
             [](A a) { return std::to_string(a.running ? 1 : 0); });
    perAudio("zerohop_audio_blocks_total", "counter", "10 ms blocks of sound captured.",
             [](A a) { return std::to_string(a.blocks); });
    perAudio("zerohop_audio_overruns_total", "counter", "Capture overruns (the device's buffer filled: samples lost).",
             [](A a) { return std::to_string(a.overruns); });
    perAudio("zerohop_audio_capture_errors_total", "counter", "Other capture faults recovered from (suspend, short reads).",
             [](A a) { return std::to_string(a.errors); });
    perAudio("zerohop_audio_reopens_total", "counter", "Times the sound device came back after it was lost.",
             [](A a) { return std::to_string(a.reopens); });
    perAudio("zerohop_audio_queue_drops_total", "counter", "Blocks dropped before the Opus encode, which fell behind.",
             [](A a) { return std::to_string(a.queueDrops); });
    perAudio("zerohop_audio_failures_total", "counter", "Sound faults not recovered from (the sound stopped; the picture plays).",
             [](A a) { return std::to_string(a.failures); });
    perAudio("zerohop_audio_packets_total", "counter",
             "Opus packets (10 or 20 ms each) encoded or passed on.",
             [](A a) { return std::to_string(a.packets); });
    perAudio("zerohop_audio_encode_seconds", "gauge", "Mean time to encode one Opus packet, over the last 50.",
             [](A a) { return num(a.encodeMsPerPacket / 1000.0); });
    perAudio("zerohop_audio_sent_packets_total", "counter", "Opus packets handed to viewers (each viewer counts).",
             [](A a) { return std::to_string(a.sent); });
    perAudio("zerohop_audio_send_dropped_packets_total", "counter", "Opus packets a viewer's send queue dropped.",
             [](A a) { return std::to_string(a.sendDropped); });
  }
  family(os, cams, "zerohop_share_readers", "gauge", "Processes reading the frame share now.",
         [&](L l, S s, C) { os << "zerohop_share_readers" << braces(l) << ' ' << s.shareReaders << '\n'; });
  family(os, cams, "zerohop_fps", "gauge", "Frames per second over the last window.",
         [&](L l, S s, C) { os << "zerohop_fps" << braces(l) << ' ' << num(s.latency.fps) << '\n'; });
  family(os, cams, "zerohop_uptime_seconds", "gauge", "Seconds since the pipeline started.",
         [&](L l, S s, C) { os << "zerohop_uptime_seconds" << braces(l) << ' ' << num(s.uptimeSeconds) << '\n'; });
  family(os, cams, "zerohop_stage_latency_seconds", "histogram",
         "Time from the previous stage to this one (ingest, convert, encode, send).", [&](L l, S s, C) {
           for (std::size_t i = 1; i < kStageCount; ++i) {
             if (s.latency.stageHistogram[i].counts.back() == 0) continue;
             histogram(os, "zerohop_stage_latency_seconds",
                       l + (l.empty() ? "" : ",") + "stage=\"" + stageName(static_cast<Stage>(i)) + "\"",
                       s.latency.stageHistogram[i]);
           }
         });
  family(os, cams, "zerohop_capture_to_send_seconds", "histogram", "Time from capture to the WebRTC sender.",
         [&](L l, S s, C) { histogram(os, "zerohop_capture_to_send_seconds", l, s.latency.totalHistogram); });
  return os.str();
}

}  // namespace zerohop
