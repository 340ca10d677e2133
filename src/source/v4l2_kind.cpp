// The `v4l2` source kind: a V4L2 camera (the emulated camera too),
// `v4l2:/dev/videoN[?format=..&size=WxH&fps=N&memory=mmap|userptr]`.
#include "source_kind.hpp"
#include "zerohop/capture.hpp"

namespace zerohop {
namespace {

void parseTarget(std::string_view target, SourceSpec& spec) {
  if (target.empty() || target.front() != '/') badSourceSpec("v4l2 needs a device path such as /dev/video0");
  spec.path = std::string(target);
}

bool parseOption(std::string_view key, std::string_view value, SourceSpec& spec) {
  if (key != "memory") return false;
  if (value != "mmap" && value != "userptr") badSourceSpec("memory must be mmap or userptr");
  spec.options[std::string(key)] = std::string(value);
  return true;
}

void print(const SourceSpec& spec, SourceSpecText& text) {
  text.target(spec.path);
  printCommonOptions(spec, text);
  if (auto m = spec.options.find("memory"); m != spec.options.end()) text.option("memory", m->second);
}

// A camera that goes away (unplugged, ENODEV) is reopened with bounded back-off; the pipeline and its
// viewers stay up meanwhile.
std::unique_ptr<FrameSource> open(const SourceSpec& spec, const SourceOptions& options) {
  return openReconnectingV4l2Source(spec, options);
}

}  // namespace

SourceKind v4l2SourceKind() {
  return {"v4l2", "v4l2:/dev/videoN[?format=..&size=WxH&fps=N&memory=mmap|userptr]",
          "v4l2:/dev/video0?format=mjpeg&size=1920x1080&fps=30&memory=userptr", parseTarget, parseOption, print, open};
}

}  // namespace zerohop
