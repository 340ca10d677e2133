#pragma once
// Frame sources: the built-in test camera, V4L2 cameras (and the emulated camera, which is a V4L2
// camera to us). A source lends frames out as FrameLeases from its own pool; the lease gives the
// buffer back (free list or VIDIOC_QBUF) when the pipeline is done with it.
// Thread-safety: a FrameSource is thread-bound to the capture thread, except counters() and
// requestKeyframe(), which are thread-safe.

#include <chrono>
#include <functional>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "zerohop/export.h"
#include "zerohop/buffer_pool.hpp"
#include "zerohop/frame.hpp"

namespace zerohop {

/// A parsed `--source` argument, `KIND[:TARGET][?key=value&...]`: `test[:WxH[@FPS]][?format=yuyv]`,
/// `v4l2:/dev/videoN[?format=..&size=WxH&fps=N&memory=mmap|userptr]` or `share:NAME[?dir=/abs/dir]`.
/// Every kind is parsed, printed and opened through one registry (src/source/source_kind.hpp);
/// format, size and fps are every kind's options.
struct SourceSpec {
  std::string kind;  ///< a registered kind's name: "test", "v4l2", "share"
  std::string path;  ///< the target: device path for v4l2, share name for share
  PixelFormat format = PixelFormat::kUnknown;  ///< kUnknown = the source's choice
  std::uint32_t width = 0;
  std::uint32_t height = 0;
  double fps = 0;
  std::map<std::string, std::string> options;  ///< the kind's own query options (memory=..., dir=...)
};

/// Parses a source spec. Throws Error(kInvalidArgument) whose message says what is wrong and
/// shows a correct example.
ZEROHOP_API SourceSpec parseSourceSpec(std::string_view text);
/// The spec as text parseSourceSpec() takes back.
ZEROHOP_API std::string toString(const SourceSpec& spec);

struct SourceInfo {
  std::string description;  ///< "test pattern 1280x720@30 yuyv", "/dev/video0 (UVC Camera) mjpeg 1920x1080@30"
  PixelFormat format = PixelFormat::kUnknown;
  std::uint32_t width = 0;
  std::uint32_t height = 0;
  double fps = 0;
  ColorDesc color{};
  MemoryKind memory = MemoryKind::kHost;
};

/// Where a source's capture instants (Stage::kCapture) come from.
enum class CaptureOrigin : std::uint8_t {
  kLocal,    ///< this host stamped the capture (a V4L2 buffer's timestamp, the test camera, a share's stamp)
  kCamera,   ///< the camera's own clock, put on this host's (an IP camera's RTCP sender reports)
  kArrival,  ///< the frame's arrival here (an IP camera before its first sender report, or whose clock is
             ///< too far from this host's): the network's delay is then outside the latency figures
};

struct SourceCounters {
  std::uint64_t frames = 0;  ///< frames delivered
  std::uint64_t drops = 0;   ///< sequence gaps, frames the consumer was too slow for
  std::uint64_t errors = 0;  ///< frames rejected (error-flagged buffers, corrupt JPEG)
  std::uint64_t stalls = 0;  ///< periods with no frame for several intervals
  CaptureOrigin captureOrigin = CaptureOrigin::kLocal;  ///< of the last frame delivered
};

/// "local", "camera", "arrival".
ZEROHOP_API const char* captureOriginName(CaptureOrigin origin) noexcept;

class ZEROHOP_API FrameSource {
 public:
  virtual ~FrameSource() = default;
  virtual SourceInfo info() const = 0;
  /// Waits up to `timeout` for the next frame; nullopt on timeout. Throws Error on failure
  /// (Errc::kNotFound / kUnavailable when the camera is gone).
  virtual std::optional<FrameLease> next(std::chrono::milliseconds timeout) = 0;
  virtual SourceCounters counters() const = 0;
  /// Asks a camera that sends H.264 for an IDR soon (V4L2_CID_MPEG_VIDEO_FORCE_KEY_FRAME). True when
  /// the camera took the request; false when it cannot (no such control, not a compressed stream,
  /// camera gone). Thread-safe, unlike next(): the encode thread calls it.
  virtual bool requestKeyframe() { return false; }
};

/// Options a pipeline gives a source: where its buffers come from (on the GPU path, a pinned
/// allocator, so the camera's one kernel copy lands in memory the GPU can DMA from).
struct SourceOptions {
  std::function<std::unique_ptr<FrameAllocator>()> allocatorFactory;  ///< null = host memory
  std::uint32_t bufferCount = 4;
  /// The CUDA device of the pipeline's GPU path (-1: none, or the source's own choice). Sources that
  /// decode on the GPU (rtsp://...?format=nv12) decode there.
  int gpuDevice = -1;
};

/// Opens the source a spec names, through its kind's opener. Throws Error with the cause and the fix
/// (kInvalidArgument for a kind nobody registered).
ZEROHOP_API std::unique_ptr<FrameSource> openSource(const SourceSpec& spec, const SourceOptions& options = {});

}  // namespace zerohop
