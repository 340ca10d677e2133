#include <charconv>
#include <sstream>

#include "zerohop/error.hpp"
#if ZEROHOP_HAVE_RTSP
#include "rtsp/rtsp_source.hpp"
#endif
#include "zerohop/source.hpp"

namespace zerohop {
namespace {

constexpr const char* kExamples =
    "; examples: test:1280x720@30, test:1920x1080@60?format=uyvy, "
    "v4l2:/dev/video0?format=mjpeg&size=1920x1080&fps=30&memory=userptr, share:cam0, rtsp://user:pw@192.168.1.20/stream1";

[[noreturn]] void bad(const std::string& what) {
  throw Error(Errc::kInvalidArgument, "bad --source: " + what + kExamples);
}

std::uint32_t parseUint(std::string_view s, const char* what) {
  std::uint32_t v = 0;
  auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || p != s.data() + s.size() || s.empty()) bad(std::string("'") + std::string(s) + "' is not a valid " + what);
  return v;
}

void parseSize(std::string_view s, SourceSpec& spec) {
  const auto x = s.find('x');
  if (x == std::string_view::npos) bad("size '" + std::string(s) + "' must look like 1280x720");
  spec.width = parseUint(s.substr(0, x), "width");
  spec.height = parseUint(s.substr(x + 1), "height");
  if (spec.width < 16 || spec.height < 16 || spec.width > 8192 || spec.height > 8192)
    bad("size " + std::string(s) + " is outside 16x16..8192x8192");
}

void parseFps(std::string_view s, SourceSpec& spec) {
  const auto v = parseUint(s, "frame rate");
  if (v < 1 || v > 240) bad("frame rate " + std::string(s) + " is outside 1..240");
  spec.fps = v;
}

// Every frame is H.264-encoded (or passed through as H.264): a size or rate past level 5.2's bounds
// (36,864 macroblocks a frame, 2,073,600 a second) cannot be carried by NVENC, x264's live presets or
// a browser's decoder, so it is refused here, before a pool of such frames is allocated.
void checkEncodable(const SourceSpec& spec) {
  constexpr std::uint64_t kMaxFrameMbs = 36864, kMaxMbRate = 2073600;
  if (spec.width == 0 || spec.height == 0) return;
  const std::uint64_t mbs = std::uint64_t{(spec.width + 15) / 16} * ((spec.height + 15) / 16);
  const std::string size = std::to_string(spec.width) + "x" + std::to_string(spec.height);
  if (mbs > kMaxFrameMbs || spec.width > 4096 || spec.height > 4096)
    bad("size " + size + " is past what H.264 level 5.2 carries (36,864 macroblocks a frame, sides up to 4096, e.g. 4096x2304)");
  if (spec.fps > 0 && mbs * spec.fps > kMaxMbRate)
    bad(size + " at " + std::to_string(spec.fps) + " fps is past what H.264 level 5.2 carries (2,073,600 macroblocks a second, e.g. 3840x2160@60 or 1920x1080@240)");
}

}  // namespace

SourceSpec parseSourceSpec(std::string_view text) {
#if ZEROHOP_HAVE_RTSP
  if (text.substr(0, 7) == "rtsp://") return parseRtspSourceSpec(text);  // its query is partly the camera's
#endif
  SourceSpec spec;
  std::string_view query;
  if (auto q = text.find('?'); q != std::string_view::npos) {
    query = text.substr(q + 1);
    text = text.substr(0, q);
  }
  const auto colon = text.find(':');
  spec.kind = std::string(text.substr(0, colon));
  std::string_view rest = colon == std::string_view::npos ? std::string_view{} : text.substr(colon + 1);
  if (spec.kind == "test") {
    spec.width = 1280, spec.height = 720, spec.fps = 30;
    if (!rest.empty()) {
      const auto at = rest.find('@');
      parseSize(rest.substr(0, at), spec);
      if (at != std::string_view::npos) parseFps(rest.substr(at + 1), spec);
    }
  } else if (spec.kind == "v4l2") {
    if (rest.empty() || rest.front() != '/') bad("v4l2 needs a device path such as /dev/video0");
    spec.path = std::string(rest);
  } else if (spec.kind == "share") {
    if (rest.empty()) bad("share needs the name another process publishes, e.g. share:cam0");
    spec.path = std::string(rest);
  } else {
    bad("unknown source kind '" + spec.kind + "' (use test, v4l2, share or rtsp://)");
  }
  while (!query.empty()) {
    const auto amp = query.find('&');
    std::string_view kv = query.substr(0, amp);
    query = amp == std::string_view::npos ? std::string_view{} : query.substr(amp + 1);
    const auto eq = kv.find('=');
    if (eq == std::string_view::npos) bad("option '" + std::string(kv) + "' must be key=value");
    const std::string key(kv.substr(0, eq));
    const std::string_view value = kv.substr(eq + 1);
    if (key == "format") {
      auto f = parseFormat(value);
      if (!f) bad("unknown format '" + std::string(value) + "' (yuyv, uyvy, nv12, i420, mjpeg, h264)");
      spec.format = *f;
    } else if (key == "size") {
      parseSize(value, spec);
    } else if (key == "fps") {
      parseFps(value, spec);
    } else if (key == "dir" && spec.kind == "share") {
      if (value.empty() || value.front() != '/') bad("dir must be an absolute path (the share's directory)");
      spec.options[key] = std::string(value);
    } else if (key == "memory") {
      if (value != "mmap" && value != "userptr") bad("memory must be mmap or userptr");
      spec.options[key] = std::string(value);
    } else {
      bad("unknown option '" + key + "'");
    }
  }
  checkEncodable(spec);
  return spec;
}

std::string toString(const SourceSpec& spec) {
#if ZEROHOP_HAVE_RTSP
  if (spec.kind == "rtsp") return rtspSourceString(spec);  // credentials masked
#endif
  std::ostringstream os;
  os << spec.kind << ':';
  if (spec.kind == "v4l2" || spec.kind == "share") os << spec.path;
  char sep = '?';  // then '&': the first query option opens the query
  auto option = [&](const std::string& key, const std::string& value) {
    os << sep << key << '=' << value;
    sep = '&';
  };
  const std::string size = std::to_string(spec.width) + 'x' + std::to_string(spec.height);
  std::ostringstream fps;
  fps << spec.fps;
  if (spec.kind == "test") {
    if (spec.width) os << size;
    if (spec.fps > 0) os << '@' << fps.str();
  } else {
    if (spec.width) option("size", size);
    if (spec.fps > 0) option("fps", fps.str());
  }
  if (spec.format != PixelFormat::kUnknown) option("format", std::string(formatName(spec.format)));
  return os.str();
}

}  // namespace zerohop
