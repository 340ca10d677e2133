#include "ffprobe.hpp"

#include <cstdio>
#include <cstdlib>
#include <nlohmann/json.hpp>

namespace zerohop::testing {
namespace {

std::string runCapture(const std::string& cmd) {
  std::string out;
  FILE* p = popen(cmd.c_str(), "r");
  if (!p) return out;
  char buf[4096];
  std::size_t n;
  while ((n = std::fread(buf, 1, sizeof buf, p)) > 0) out.append(buf, n);
  pclose(p);
  return out;
}

double parseRate(const std::string& r) {
  const auto slash = r.find('/');
  if (slash == std::string::npos) return std::atof(r.c_str());
  const double den = std::atof(r.c_str() + slash + 1);
  return den > 0 ? std::atof(r.substr(0, slash).c_str()) / den : 0;
}

}  // namespace

bool haveFfprobe() {
  return std::system("ffprobe -version >/dev/null 2>&1") == 0;
}

ProbeResult probeFile(const std::string& path) {
  ProbeResult r;
  const std::string q = "'" + path + "'";
  const std::string text = runCapture(
      "ffprobe -v error -count_frames -select_streams v:0 -show_entries "
      "stream=codec_name,nb_read_frames,duration,avg_frame_rate:format=duration -of json " +
      q + " 2>&1");
  nlohmann::json j = nlohmann::json::parse(text, nullptr, false);
  if (j.is_discarded() || !j.contains("streams") || j["streams"].empty()) {
    r.error = text;
    return r;
  }
  const auto& s = j["streams"][0];
  r.codec = s.value("codec_name", "");
  r.frames = std::atol(s.value("nb_read_frames", "0").c_str());
  r.frameRate = parseRate(s.value("avg_frame_rate", "0/0"));
  std::string dur = j.contains("format") ? j["format"].value("duration", "") : "";
  if (dur.empty()) dur = s.value("duration", "0");
  r.durationSeconds = std::atof(dur.c_str());
  const std::string first = runCapture(
      "ffprobe -v error -select_streams v:0 -read_intervals '%+#1' -show_entries "
      "frame=key_frame -of csv=p=0 " +
      q + " 2>/dev/null");
  r.firstIsKeyframe = first.rfind("1", 0) == 0;
  r.ok = r.frames > 0;
  if (!r.ok) r.error = text;
  return r;
}

AudioProbeResult probeAudio(const std::string& path) {
  AudioProbeResult r;
  const std::string text = runCapture(
      "ffprobe -v error -count_packets -select_streams a:0 -show_entries "
      "stream=codec_name,nb_read_packets,channels,start_time -of json '" +
      path + "' 2>&1");
  nlohmann::json j = nlohmann::json::parse(text, nullptr, false);
  if (j.is_discarded() || !j.contains("streams") || j["streams"].empty()) {
    r.error = text.empty() ? "no sound track" : text;
    return r;
  }
  const auto& s = j["streams"][0];
  r.codec = s.value("codec_name", "");
  r.packets = std::atol(s.value("nb_read_packets", "0").c_str());
  r.channels = s.value("channels", 0);
  r.startSeconds = std::atof(s.value("start_time", "0").c_str());
  r.ok = true;
  return r;
}

}  // namespace zerohop::testing
