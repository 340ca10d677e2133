#include "test_camera.hpp"
#include "zerohop/error.hpp"
#include "zerohop/source.hpp"

namespace zerohop {

std::unique_ptr<FrameSource> openSource(const SourceSpec& spec, const SourceOptions& options) {
  if (spec.kind == "test") return std::make_unique<TestCamera>(spec, options);
  if (spec.kind == "v4l2") {
    throw Error(Errc::kUnsupported, "v4l2 capture (" + spec.path +
                                        ") is not built yet in this version; use --source test:1280x720@30");
  }
  throw Error(Errc::kInvalidArgument, "unknown source kind '" + spec.kind + "'");
}

}  // namespace zerohop
