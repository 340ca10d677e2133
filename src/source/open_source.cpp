#include "pattern_camera.hpp"
#include "share_source.hpp"
#include "zerohop/capture.hpp"
#include "zerohop/error.hpp"
#include "zerohop/source.hpp"
#if ZEROHOP_HAVE_RTSP
#include "rtsp/rtsp_source.hpp"
#endif

namespace zerohop {

std::unique_ptr<FrameSource> openSource(const SourceSpec& spec, const SourceOptions& options) {
  if (spec.kind == "test") return std::make_unique<PatternCamera>(spec, options);
  // A camera that goes away (unplugged, ENODEV) is reopened with bounded back-off; the pipeline
  // and its viewers stay up meanwhile.
  if (spec.kind == "v4l2") return openReconnectingV4l2Source(spec, options);
  // Another process's share: its frames are read in place (options' allocator does not apply).
  if (spec.kind == "share") return std::make_unique<ShareSource>(spec);
#if ZEROHOP_HAVE_RTSP
  // An IP camera: its H.264 passed through; reconnects with back-off (src/rtsp).
  if (spec.kind == "rtsp") return openRtspSource(spec, options);
#endif
  throw Error(Errc::kInvalidArgument, "unknown source kind '" + spec.kind + "'");
}

}  // namespace zerohop
