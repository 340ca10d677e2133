#include "metrics_text.hpp"

#include <cstdio>
#include <sstream>

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

}  // namespace

std::string renderMetricsText(const PipelineStatus& s, const StatsContext& ctx) {
  std::ostringstream os;
  header(os, "zerohop_info", "gauge", "Build and pipeline description (always 1).");
  os << "zerohop_info{version=\"" << kVersion << "\",source=\"" << escapeLabel(ctx.source) << "\",encoder=\""
     << escapeLabel(ctx.encoder) << "\",path=\"" << escapeLabel(ctx.path) << "\"} 1\n";
  header(os, "zerohop_frames_total", "counter", "Frames encoded and handed to the WebRTC sender.");
  os << "zerohop_frames_total " << s.latency.frames << '\n';
  header(os, "zerohop_dropped_frames_total", "counter", "Frames dropped, by where they were dropped.");
  os << "zerohop_dropped_frames_total{where=\"source\"} " << s.source.drops << '\n';
  os << "zerohop_dropped_frames_total{where=\"encoder_queue\"} " << s.queueDrops << '\n';
  header(os, "zerohop_source_errors_total", "counter", "Frames the source rejected (error-flagged, corrupt).");
  os << "zerohop_source_errors_total " << s.source.errors << '\n';
  header(os, "zerohop_source_stalls_total", "counter", "Periods with no frame from the source for several intervals.");
  os << "zerohop_source_stalls_total " << s.source.stalls << '\n';
  header(os, "zerohop_keyframes_forced_total", "counter", "IDR frames forced by viewer requests.");
  os << "zerohop_keyframes_forced_total " << s.keyframesForced << '\n';
  header(os, "zerohop_viewers", "gauge", "WebRTC viewers connected now.");
  os << "zerohop_viewers " << s.viewers << '\n';
  header(os, "zerohop_share_readers", "gauge", "Processes reading the frame share now.");
  os << "zerohop_share_readers " << s.shareReaders << '\n';
  header(os, "zerohop_fps", "gauge", "Frames per second over the last window.");
  os << "zerohop_fps " << num(s.latency.fps) << '\n';
  header(os, "zerohop_uptime_seconds", "gauge", "Seconds since the pipeline started.");
  os << "zerohop_uptime_seconds " << num(s.uptimeSeconds) << '\n';
  header(os, "zerohop_stage_latency_seconds", "histogram",
         "Time from the previous stage to this one (ingest, convert, encode, send).");
  for (std::size_t i = 1; i < kStageCount; ++i) {
    if (s.latency.stageHistogram[i].counts.back() == 0) continue;
    histogram(os, "zerohop_stage_latency_seconds", std::string("stage=\"") + stageName(static_cast<Stage>(i)) + "\"",
              s.latency.stageHistogram[i]);
  }
  header(os, "zerohop_capture_to_send_seconds", "histogram", "Time from capture to the WebRTC sender.");
  histogram(os, "zerohop_capture_to_send_seconds", "", s.latency.totalHistogram);
  return os.str();
}

}  // namespace zerohop
