#include "camemu/camemu_config.hpp"

#include <charconv>
#include <cstdlib>
#include <string>

#include "zerohop/error.hpp"

namespace zerohop::camemu {
namespace {

[[noreturn]] void bad(std::string_view what) {
  throw Error(Errc::kInvalidArgument, "zerohop-camemu: " + std::string(what));
}

template <class T>
T parseNumber(std::string_view s, std::string_view what) {
  T v{};
  auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (s.empty() || ec != std::errc() || p != s.data() + s.size()) {
    bad(std::string(what) + " '" + std::string(s) + "' is not a number");
  }
  return v;
}

// "N:MS" -> (N, MS); MS optional when `msOptional`.
std::pair<std::uint64_t, std::int64_t> parsePair(std::string_view s, std::string_view what, bool msOptional) {
  const auto colon = s.find(':');
  if (colon == std::string_view::npos) {
    if (!msOptional) bad(std::string(what) + " needs N:MS, got '" + std::string(s) + "'");
    return {parseNumber<std::uint64_t>(s, what), -1};
  }
  return {parseNumber<std::uint64_t>(s.substr(0, colon), what),
          parseNumber<std::int64_t>(s.substr(colon + 1), what)};
}

}  // namespace

bool formatSupported(PixelFormat format) noexcept {
  switch (format) {
    case PixelFormat::kYUYV:
    case PixelFormat::kUYVY:
    case PixelFormat::kNV12:
      return true;
#ifdef ZEROHOP_CAMEMU_WITH_JPEG
    case PixelFormat::kMJPEG:
      return true;
#endif
#ifdef ZEROHOP_CAMEMU_WITH_H264
    case PixelFormat::kH264:
      return true;
#endif
    default:
      return false;
  }
}

void applySetting(EmuConfig& c, std::string_view key, std::string_view value) {
  if (key == "device") {
    if (value.empty() || value.front() != '/') bad("--device needs an absolute path such as /dev/video0");
    if (value.find_first_of(",;") != std::string_view::npos) bad("a device path cannot contain ',' or ';'");
    c.devicePath = std::string(value);
  } else if (key == "format") {
    auto f = parseFormat(value);
    if (!f || !formatSupported(*f)) {
      bad("format '" + std::string(value) + "' is not emulated in this build (yuyv, uyvy, nv12" +
#ifdef ZEROHOP_CAMEMU_WITH_JPEG
          ", mjpeg" +
#endif
#ifdef ZEROHOP_CAMEMU_WITH_H264
          ", h264" +
#endif
          std::string(")"));
    }
    c.format = *f;
  } else if (key == "size") {
    const auto x = value.find('x');
    if (x == std::string_view::npos) bad("--size must look like 1280x720");
    c.width = parseNumber<std::uint32_t>(value.substr(0, x), "width");
    c.height = parseNumber<std::uint32_t>(value.substr(x + 1), "height");
    if (c.width < 320 || c.height < 16 || c.width > 7680 || c.height > 4320 || c.width % 2 || c.height % 2) {
      bad("--size " + std::string(value) + " must be even and within 320x16..7680x4320");
    }
  } else if (key == "fps") {
    c.fps = parseNumber<std::uint32_t>(value, "fps");
    if (c.fps < 1 || c.fps > 240) bad("--fps must be within 1..240");
  } else if (key == "expbuf") {
    c.expbuf = value != "0" && value != "off";
  } else if (key == "keyframe-control") {
    c.keyframeControl = value != "0" && value != "off";
  } else if (key == "h264-headers") {
    if (value != "idr" && value != "once") bad("--h264-headers must be idr (before every IDR) or once");
    c.h264HeadersEveryIdr = value == "idr";
  } else if (key == "error-every") {
    c.faults.errorEvery = parseNumber<std::uint32_t>(value, key);
  } else if (key == "corrupt-every") {
    c.faults.corruptEvery = parseNumber<std::uint32_t>(value, key);
  } else if (key == "truncate-every") {
    c.faults.truncateEvery = parseNumber<std::uint32_t>(value, key);
  } else if (key == "empty-every") {
    c.faults.emptyEvery = parseNumber<std::uint32_t>(value, key);
  } else if (key == "drop-every") {
    c.faults.dropEvery = parseNumber<std::uint32_t>(value, key);
  } else if (key == "slow-every") {
    auto [n, ms] = parsePair(value, key, false);
    c.faults.slowEvery = static_cast<std::uint32_t>(n);
    c.faults.slowMs = static_cast<std::uint32_t>(ms);
  } else if (key == "stall-at") {
    auto [n, ms] = parsePair(value, key, false);
    c.faults.stallAt = n;
    c.faults.stallMs = static_cast<std::uint32_t>(ms);
  } else if (key == "unplug-at") {
    auto [n, ms] = parsePair(value, key, true);
    c.faults.unplugAt = n;
    c.faults.replugMs = ms;
  } else {
    bad("unknown setting '" + std::string(key) + "'");
  }
}

void applyFaults(EmuConfig& c, std::string_view list) {
  while (!list.empty()) {
    const auto comma = list.find(',');
    const std::string_view item = list.substr(0, comma);
    list = comma == std::string_view::npos ? std::string_view{} : list.substr(comma + 1);
    if (item.empty()) continue;
    const auto eq = item.find('=');
    if (eq == std::string_view::npos) bad("fault '" + std::string(item) + "' must be name=value");
    applySetting(c, item.substr(0, eq), item.substr(eq + 1));
  }
}

std::string faultsToString(const FaultPlan& f) {
  std::string out;
  auto add = [&](const char* name, const std::string& v) {
    if (!out.empty()) out += ',';
    out += name;
    out += '=';
    out += v;
  };
  if (f.errorEvery) add("error-every", std::to_string(f.errorEvery));
  if (f.corruptEvery) add("corrupt-every", std::to_string(f.corruptEvery));
  if (f.truncateEvery) add("truncate-every", std::to_string(f.truncateEvery));
  if (f.emptyEvery) add("empty-every", std::to_string(f.emptyEvery));
  if (f.dropEvery) add("drop-every", std::to_string(f.dropEvery));
  if (f.slowEvery) add("slow-every", std::to_string(f.slowEvery) + ":" + std::to_string(f.slowMs));
  if (f.stallAt) add("stall-at", std::to_string(f.stallAt) + ":" + std::to_string(f.stallMs));
  if (f.unplugAt) add("unplug-at", std::to_string(f.unplugAt) + ":" + std::to_string(f.replugMs));
  return out;
}

std::string settingsToString(const EmuConfig& c) {
  std::string out = "device=" + c.devicePath + ",format=" + std::string(formatName(c.format)) +
                    ",size=" + std::to_string(c.width) + "x" + std::to_string(c.height) +
                    ",fps=" + std::to_string(c.fps) + ",expbuf=" + (c.expbuf ? "on" : "off") +
                    ",keyframe-control=" + (c.keyframeControl ? "on" : "off") +
                    ",h264-headers=" + (c.h264HeadersEveryIdr ? "idr" : "once");
  if (const std::string faults = faultsToString(c.faults); !faults.empty()) out += "," + faults;
  return out;
}

std::vector<std::string> splitCameraGroups(std::string_view list) {
  std::vector<std::string> groups;
  while (true) {
    const auto semi = list.find(';');
    groups.emplace_back(list.substr(0, semi));
    if (semi == std::string_view::npos) break;
    list.remove_prefix(semi + 1);
  }
  return groups;
}

std::vector<EmuConfig> camerasFromGroups(const EmuConfig& defaults, const std::vector<std::string>& groups) {
  if (groups.empty()) bad("no camera given");
  if (groups.size() > kMaxCameras) bad("at most " + std::to_string(kMaxCameras) + " cameras per process");
  std::vector<EmuConfig> cameras;
  for (std::size_t i = 0; i < groups.size(); ++i) {
    EmuConfig c = defaults;
    c.index = static_cast<std::uint32_t>(i);
    c.devicePath = "/dev/video" + std::to_string(i);
    try {
      applyFaults(c, groups[i]);
    } catch (const Error& e) {
      std::string_view why = e.what();
      if (const auto at = why.find("zerohop-camemu: "); at != std::string_view::npos)
        why.remove_prefix(at + 16);
      bad("camera " + std::to_string(i) + " ('" + groups[i] + "'): " + std::string(why));
    }
    for (const EmuConfig& other : cameras) {
      if (other.devicePath == c.devicePath) {
        bad("cameras " + std::to_string(other.index) + " and " + std::to_string(i) + " both are " +
            c.devicePath);
      }
    }
    cameras.push_back(std::move(c));
  }
  return cameras;
}

std::vector<EmuConfig> camerasFromEnvironment() {
  EmuConfig defaults = configFromEnvironment();
  const char* list = std::getenv(kEnvCameras);
  if (!list || !*list) return {std::move(defaults)};
  return camerasFromGroups(defaults, splitCameraGroups(list));
}

EmuConfig configFromEnvironment() {
  EmuConfig c;
  auto env = [](const char* name) -> std::string_view {
    const char* v = std::getenv(name);
    return v ? std::string_view(v) : std::string_view{};
  };
  if (auto v = env(kEnvDevice); !v.empty()) applySetting(c, "device", v);
  if (auto v = env(kEnvFormat); !v.empty()) applySetting(c, "format", v);
  if (auto v = env(kEnvSize); !v.empty()) applySetting(c, "size", v);
  if (auto v = env(kEnvFps); !v.empty()) applySetting(c, "fps", v);
  if (auto v = env(kEnvExpbuf); !v.empty()) applySetting(c, "expbuf", v);
  if (auto v = env(kEnvKeyframeControl); !v.empty()) applySetting(c, "keyframe-control", v);
  if (auto v = env(kEnvH264Headers); !v.empty()) applySetting(c, "h264-headers", v);
  applyFaults(c, env(kEnvFaults));
  c.verbose = !env(kEnvVerbose).empty() && env(kEnvVerbose) != "0";
  return c;
}

}  // namespace zerohop::camemu
