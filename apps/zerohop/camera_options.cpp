#include "camera_options.hpp"

#include <algorithm>
#include <charconv>
#include <cstdlib>
#include <fstream>

#include "record/media_file.hpp"
#include "rtsp/rtsp_url.hpp"
#include "stream/janus_target.hpp"
#include "zerohop/error.hpp"

namespace zerohop::cli {
namespace {

std::string trim(const std::string& s) {
  const auto b = s.find_first_not_of(" \t\r");
  if (b == std::string::npos) return {};
  const auto e = s.find_last_not_of(" \t\r");
  return s.substr(b, e - b + 1);
}

[[noreturn]] void bad(const std::string& message) {
  throw Error(Errc::kInvalidArgument, message);
}

// A TOML value on one line: "basic" (\" \\ \t \n escapes), 'literal', or a bare integer / word; a
// trailing # comment is dropped. False when it is none of these.
bool parseValue(const std::string& text, std::string& out) {
  const std::string t = trim(text);
  if (t.empty()) return false;
  std::size_t end = 0;
  if (t.front() == '"') {
    out.clear();
    for (end = 1; end < t.size() && t[end] != '"'; ++end) {
      if (t[end] != '\\') {
        out += t[end];
        continue;
      }
      if (++end == t.size()) return false;
      switch (t[end]) {
        case '"':
          out += '"';
          break;
        case '\\':
          out += '\\';
          break;
        case 't':
          out += '\t';
          break;
        case 'n':
          out += '\n';
          break;
        default:
          return false;
      }
    }
    if (end == t.size()) return false;
    ++end;
  } else if (t.front() == '\'') {
    end = t.find('\'', 1);
    if (end == std::string::npos) return false;
    out = t.substr(1, end - 1);
    ++end;
  } else {
    end = t.find('#');
    out = trim(t.substr(0, end));
    if (out.empty() || !std::all_of(out.begin(), out.end(), [](unsigned char c) {
          return std::isalnum(c) || c == '_' || c == '-' || c == '+';
        })) {
      return false;
    }
    return true;
  }
  const std::string rest = trim(t.substr(end));
  return rest.empty() || rest.front() == '#';
}

std::string cameraLabel(const CameraTable& t) {
  const auto it = t.values.find("name");
  return it == t.values.end() ? "the [[camera]] table at line " + std::to_string(t.line)
                              : "camera \"" + it->second + "\" (line " + std::to_string(t.line) + ")";
}

std::uint32_t number(const CameraTable& t, const std::string& key, std::uint32_t lo, std::uint32_t hi,
                     const std::string& where) {
  const std::string& v = t.values.at(key);
  std::uint32_t n = 0;
  const auto [p, ec] = std::from_chars(v.data(), v.data() + v.size(), n);
  if (ec != std::errc{} || p != v.data() + v.size() || n < lo || n > hi) {
    bad(where + "line " + std::to_string(t.lines.at(key)) + ": " + cameraLabel(t) + ": " + key + " = " + v +
        " is not a whole number from " + std::to_string(lo) + " to " + std::to_string(hi));
  }
  return n;
}

}  // namespace

std::vector<CameraTable> readCameraTables(const std::string& path) {
  std::ifstream in(path);
  if (!in) bad("--config " + path + ": cannot be read");
  const std::string where = "--config " + path + " ";
  std::vector<CameraTable> tables;
  bool inCamera = false;
  std::map<std::size_t, std::pair<std::string, int>> unknown;  // table -> its first unknown key, line
  std::string line;
  for (int number = 1; std::getline(in, line); ++number) {
    const std::string t = trim(line);
    if (t.empty() || t.front() == '#') continue;
    if (t.front() == '[') {
      inCamera = t.rfind("[[camera]]", 0) == 0;
      if (inCamera) tables.push_back(CameraTable{number, {}, {}});
      continue;
    }
    if (!inCamera) continue;
    CameraTable& table = tables.back();
    const auto eq = t.find('=');
    const std::string key = eq == std::string::npos ? t : trim(t.substr(0, eq));
    if (std::find(kCameraTableKeys.begin(), kCameraTableKeys.end(), key) == kCameraTableKeys.end()) {
      // Reported once the table is read, so that the message can name the camera.
      if (!unknown.count(tables.size() - 1))
        unknown.emplace(tables.size() - 1, std::pair{key.substr(0, 60), number});
      continue;
    }
    std::string value;
    if (eq == std::string::npos || !parseValue(t.substr(eq + 1), value)) {
      bad(where + "line " + std::to_string(number) + ": " + cameraLabel(table) + ": " + key +
          " needs a value: a \"string\" or a whole number");
    }
    if (!table.values.emplace(key, value).second) {
      bad(where + "line " + std::to_string(number) + ": " + cameraLabel(table) + ": " + key +
          " is given twice");
    }
    table.lines.emplace(key, number);
  }
  for (const auto& [index, key] : unknown) {
    std::string known;
    for (const auto& k : kCameraTableKeys) known += (known.empty() ? "" : ", ") + k;
    bad(where + "line " + std::to_string(key.second) + ": " + cameraLabel(tables[index]) +
        ": unknown key \"" + key.first + "\" in [[camera]] (known: " + known + ")");
  }
  return tables;
}

void applyDefaults(CameraConfig& c, const CameraDefaults& defaults) {
  c.encoder = defaults.encoder;
  c.gpu = defaults.gpu;
  c.renditions = defaults.renditions;
  c.audioFrameMs = defaults.audioFrameMs;
}

CameraConfig parseCameraArgument(const std::string& text, const CameraDefaults& defaults) {
  const std::string argument = rtsp::maskCredentials(text);  // as quoted in errors: an RTSP password never
  const auto eq = text.find('=');
  if (eq == std::string::npos) {
    bad("--camera " + argument + ": give NAME=SOURCE, e.g. --camera front=v4l2:/dev/video0");
  }
  CameraConfig c;
  c.name = text.substr(0, eq);
  if (!isValidCameraName(c.name)) {
    bad("--camera " + argument + ": camera \"" + c.name +
        "\": a name is 1 to 64 letters, digits, '_' or '-' (it is the URL /whep/NAME), e.g. front_door");
  }
  try {
    c.source = parseSourceSpec(text.substr(eq + 1));
  } catch (const Error& e) {
    bad("--camera " + argument + ": camera \"" + c.name + "\": " + e.what());
  }
  applyDefaults(c, defaults);
  return c;
}

CameraConfig cameraFromTable(const CameraTable& t, const CameraDefaults& defaults, const std::string& path) {
  const std::string where = "--config " + path + " ";
  const std::string head = where + "line " + std::to_string(t.line) + ": " + cameraLabel(t) + ": ";
  if (!t.values.count("name")) bad(head + "name = \"...\" is missing (the URL /whep/NAME)");
  if (!t.values.count("source"))
    bad(head + "source = \"...\" is missing, e.g. source = \"v4l2:/dev/video0\"");
  CameraConfig c;
  c.name = t.values.at("name");
  if (!isValidCameraName(c.name)) {
    bad(head +
        "a camera name is 1 to 64 letters, digits, '_' or '-' (it is the URL /whep/NAME), e.g. front_door");
  }
  try {
    c.source = parseSourceSpec(t.values.at("source"));
  } catch (const Error& e) {
    bad(head + e.what());
  }
  applyDefaults(c, defaults);
  if (t.values.count("bitrate")) c.encoder.bitrateKbps = number(t, "bitrate", 100, 100000, where);
  if (t.values.count("keyint")) c.encoder.keyframeIntervalFrames = number(t, "keyint", 0, 100000, where);
  if (t.values.count("encoder")) {
    c.encoder.encoder = t.values.at("encoder");
    if (c.encoder.encoder != "auto" && c.encoder.encoder != "x264" && c.encoder.encoder != "nvenc") {
      bad(head + "encoder = \"" + c.encoder.encoder + "\": use auto, x264 or nvenc");
    }
  }
  if (t.values.count("preset")) c.encoder.preset = t.values.at("preset");
  if (t.values.count("threads")) c.encoder.threads = static_cast<int>(number(t, "threads", 0, 64, where));
  if (t.values.count("gpu")) {
    c.gpu = t.values.at("gpu");
    if (c.gpu != "auto" && c.gpu != "off" &&
        (c.gpu.empty() ||
         !std::all_of(c.gpu.begin(), c.gpu.end(), [](unsigned char ch) { return std::isdigit(ch); }))) {
      bad(head + "gpu = \"" + c.gpu + "\": use auto, off or a CUDA device number");
    }
  }
  if (t.values.count("renditions")) c.renditions = t.values.at("renditions");  // checked by the pipeline (its size)
  if (t.values.count("share")) {
    c.shareName = t.values.at("share");
    if (!isValidCameraName(c.shareName))
      bad(head + "share = \"" + c.shareName + "\": use letters, digits, '_' and '-'");
  }
  if (t.values.count("audio")) {
    c.audio = t.values.at("audio");
    if (c.audio != "test" && c.audio != "rtsp" && c.audio.rfind("alsa:", 0) != 0)
      bad(head + "audio = \"" + c.audio +
          "\": use test, alsa:DEVICE (alsa:default, alsa:hw:1,0; zerohop probe lists them) or rtsp (an IP camera's own sound)");
    if (c.audio == "rtsp" && c.source.kind != "rtsp")
      bad(head + "audio = \"rtsp\" is an IP camera's own sound, and this camera's source is not rtsp://...: use "
                 "alsa:DEVICE for a microphone");
  }
  if (t.values.count("audio_frame_ms")) {
    c.audioFrameMs = static_cast<std::uint32_t>(number(t, "audio_frame_ms", 5, 20, where));
    if (c.audioFrameMs != 5 && c.audioFrameMs != 10 && c.audioFrameMs != 20)
      bad(head + "audio_frame_ms = " + t.values.at("audio_frame_ms") +
          ": give 20, 10 or 5 (milliseconds of sound an Opus packet carries)");
  }
  // The camera's own outputs. The URL's form is checked here; the endpoint itself when the camera starts.
  if (t.values.count("whip")) {
    c.whipUrl = t.values.at("whip");
    if (c.whipUrl.rfind("http://", 0) != 0 && c.whipUrl.rfind("https://", 0) != 0)
      bad(head +
          "whip is not an http:// or https:// URL (not quoted here: it may hold a password): give the "
          "endpoint's URL, http[s]://HOST[:PORT]/PATH, and its token as whip_token");
  }
  if (t.values.count("whip_token")) {
    c.whipToken = t.values.at("whip_token");  // a secret: never quoted back
    if (c.whipUrl.empty())
      bad(head + "whip_token is given without whip = \"http[s]://...\": the token of which endpoint?");
  }
  if (t.values.count("whip_simulcast")) {
    const std::string& v = t.values.at("whip_simulcast");
    if (v != "on" && v != "off")
      bad(head + "whip_simulcast = " + v +
          ": give \"on\" (the ladder's rungs as simulcast layers, for an SFU) or \"off\"");
    if (c.whipUrl.empty())
      bad(head +
          "whip_simulcast is given without whip = \"http[s]://...\": the simulcast of which endpoint?");
    c.whipSimulcast = v == "on";
  }
  if (t.values.count("janus")) {
    c.janus = t.values.at("janus");
    try {
      stream::parseJanusTarget(c.janus);  // its form now; the mountpoint is looked up when the camera starts
    } catch (const Error& e) {
      bad(head + "janus: " + e.what());
    }
  }
  if (t.values.count("record")) {
    c.recordPath = t.values.at("record");
    try {
      record::containerForPath(c.recordPath);
    } catch (const Error& e) {
      bad(head + "record: " + e.what());
    }
  }
  if (t.values.count("record_segment")) {
    const std::string& v = t.values.at("record_segment");
    char* end = nullptr;
    const double seconds = std::strtod(v.c_str(), &end);
    if (v.empty() || *end != '\0' || !(seconds >= 1))
      bad(head + "record_segment = " + v + ": give the seconds of each file, e.g. 600 (at least 1)");
    if (c.recordPath.empty())
      bad(head + "record_segment is given without record = \"FILE.mp4\": the segments of which recording?");
    c.recordSegmentSeconds = seconds;
  }
  return c;
}

}  // namespace zerohop::cli
