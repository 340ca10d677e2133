// The `test` source kind: the built-in test camera (PatternCamera), `test[:WxH[@FPS]][?format=yuyv|uyvy|...]`.
#include "pattern_camera.hpp"
#include "source_kind.hpp"

namespace zerohop {
namespace {

void parseTarget(std::string_view target, SourceSpec& spec) {
  spec.width = 1280, spec.height = 720, spec.fps = 30;
  if (target.empty()) return;
  const auto at = target.find('@');
  parseSourceSize(target.substr(0, at), spec);
  if (at != std::string_view::npos) parseSourceFps(target.substr(at + 1), spec);
}

void print(const SourceSpec& spec, SourceSpecText& text) {
  if (spec.width) text.target(std::to_string(spec.width) + 'x' + std::to_string(spec.height));
  if (spec.fps > 0) text.target("@" + fpsText(spec.fps));
  printCommonOptions(spec, text, /*sizeInTarget=*/true);
}

std::unique_ptr<FrameSource> open(const SourceSpec& spec, const SourceOptions& options) {
  return std::make_unique<PatternCamera>(spec, options);
}

}  // namespace

SourceKind testSourceKind() {
  return {"test", "test[:WxH[@FPS]][?format=yuyv]", "test:1280x720@30, test:1920x1080@60?format=uyvy", parseTarget,
          nullptr, print, open};
}

}  // namespace zerohop
