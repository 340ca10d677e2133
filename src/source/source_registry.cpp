// The source registry (source_kind.hpp): parseSourceSpec, toString and openSource resolve a kind
// through the one table below.
#include <charconv>
#include <sstream>
#include <vector>

#include "source_kind.hpp"
#include "zerohop/error.hpp"
#include "zerohop/setting_error.hpp"

namespace zerohop {
namespace {

/// The registered kinds: one line per kind (source_kind.hpp says how to add one).
const std::vector<SourceKind>& builtinSourceKinds() {
  static const std::vector<SourceKind> kinds = {
      testSourceKind(),
      v4l2SourceKind(),
      shareSourceKind(),
#if ZEROHOP_HAVE_RTSP
      rtspSourceKind(),
#endif
  };
  return kinds;
}

std::string kindNames() {
  std::string names;
  const auto kinds = sourceKinds();
  for (std::size_t i = 0; i < kinds.size(); ++i) {
    if (i > 0) names += i + 1 == kinds.size() ? " or " : ", ";
    names += kinds[i].name;
  }
  return names;
}

std::uint32_t parseUint(std::string_view s, const char* what) {
  std::uint32_t v = 0;
  auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || p != s.data() + s.size() || s.empty())
    badSourceSpec(std::string("'") + std::string(s) + "' is not a valid " + what);
  return v;
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
    badSourceSpec("size " + size + " is past what H.264 level 5.2 carries (36,864 macroblocks a frame, sides up to 4096, e.g. 4096x2304)");
  if (spec.fps > 0 && mbs * spec.fps > kMaxMbRate)
    badSourceSpec(size + " at " + std::to_string(spec.fps) + " fps is past what H.264 level 5.2 carries (2,073,600 macroblocks a second, e.g. 3840x2160@60 or 1920x1080@240)");
}

const SourceKind& kindOf(const SourceSpec& spec) {
  const SourceKind* kind = findSourceKind(spec.kind);
  if (!kind)
    throw SettingError(Errc::kInvalidArgument, setting::kSource,
                       "unknown source kind '" + spec.kind + "' (use " + kindNames() + ")");
  return *kind;
}

}  // namespace

std::span<const SourceKind> sourceKinds() { return builtinSourceKinds(); }

const SourceKind* findSourceKind(std::string_view name) noexcept {
  for (const SourceKind& kind : sourceKinds()) {
    if (kind.name == name) return &kind;
  }
  return nullptr;
}

void badSourceSpec(const std::string& what) {
  std::string examples;
  for (const SourceKind& kind : sourceKinds()) {
    if (kind.examples.empty()) continue;
    examples += examples.empty() ? "; examples: " : ", ";
    examples += kind.examples;
  }
  throw SettingError(Errc::kInvalidArgument, setting::kSource, "bad source spec: " + what + examples);
}

void parseSourceSize(std::string_view s, SourceSpec& spec) {
  const auto x = s.find('x');
  if (x == std::string_view::npos) badSourceSpec("size '" + std::string(s) + "' must look like 1280x720");
  spec.width = parseUint(s.substr(0, x), "width");
  spec.height = parseUint(s.substr(x + 1), "height");
  if (spec.width < 16 || spec.height < 16 || spec.width > 8192 || spec.height > 8192)
    badSourceSpec("size " + std::string(s) + " is outside 16x16..8192x8192");
}

void parseSourceFps(std::string_view s, SourceSpec& spec) {
  const auto v = parseUint(s, "frame rate");
  if (v < 1 || v > 240) badSourceSpec("frame rate " + std::string(s) + " is outside 1..240");
  spec.fps = v;
}

std::string fpsText(double fps) {
  std::ostringstream os;
  os << fps;
  return os.str();
}

void printCommonOptions(const SourceSpec& spec, SourceSpecText& text, bool sizeInTarget) {
  if (!sizeInTarget) {
    if (spec.width) text.option("size", std::to_string(spec.width) + 'x' + std::to_string(spec.height));
    if (spec.fps > 0) text.option("fps", fpsText(spec.fps));
  }
  if (spec.format != PixelFormat::kUnknown) text.option("format", formatName(spec.format));
}

SourceSpec parseSourceSpec(std::string_view text) {
  SourceSpec spec;
  spec.kind = std::string(text.substr(0, text.find_first_of(":?")));
  const SourceKind* kind = findSourceKind(spec.kind);
  if (!kind) badSourceSpec("unknown source kind '" + spec.kind + "' (use " + kindNames() + ")");
  if (kind->parseText) return kind->parseText(text);  // a URL of its own, query included
  std::string_view query;
  if (auto q = text.find('?'); q != std::string_view::npos) {
    query = text.substr(q + 1);
    text = text.substr(0, q);
  }
  const auto colon = text.find(':');
  kind->parseTarget(colon == std::string_view::npos ? std::string_view{} : text.substr(colon + 1), spec);
  while (!query.empty()) {
    const auto amp = query.find('&');
    std::string_view kv = query.substr(0, amp);
    query = amp == std::string_view::npos ? std::string_view{} : query.substr(amp + 1);
    const auto eq = kv.find('=');
    if (eq == std::string_view::npos) badSourceSpec("option '" + std::string(kv) + "' must be key=value");
    const std::string_view key = kv.substr(0, eq);
    const std::string_view value = kv.substr(eq + 1);
    if (key == "format") {
      auto f = parseFormat(value);
      if (!f) badSourceSpec("unknown format '" + std::string(value) + "' (yuyv, uyvy, nv12, i420, mjpeg, h264)");
      spec.format = *f;
    } else if (key == "size") {
      parseSourceSize(value, spec);
    } else if (key == "fps") {
      parseSourceFps(value, spec);
    } else if (!kind->parseOption || !kind->parseOption(key, value, spec)) {
      badSourceSpec("unknown option '" + std::string(key) + "' for a " + spec.kind + " source (" +
                    std::string(kind->synopsis) + ")");
    }
  }
  checkEncodable(spec);
  return spec;
}

std::string toString(const SourceSpec& spec) {
  const SourceKind* kind = findSourceKind(spec.kind);
  SourceSpecText text(spec.kind);
  if (kind) {
    kind->print(spec, text);
  } else {  // a spec built by hand with a kind nobody registered: printed as far as it goes
    printCommonOptions(spec, text);
  }
  return text.str();
}

std::unique_ptr<FrameSource> openSource(const SourceSpec& spec, const SourceOptions& options) {
  return kindOf(spec).open(spec, options);
}

}  // namespace zerohop
