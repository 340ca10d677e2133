#pragma once
// Several cameras in one server: each camera its own Pipeline (source, processor, encoder, shares,
// threads), all of them behind one StreamServer (one port): POST /whep/NAME plays camera NAME, POST
// /whep the first camera; GET /stats and /metrics report every camera.
//
// Isolation: every camera runs on its own threads. One that fails to open, or whose pipeline fails
// (capture error, the source gone for good), is reported in /stats ("state", "error") and opened
// again with back-off (1 s doubling to 30 s) on its own thread, while the others run on. An unplugged
// V4L2 camera is reopened by its source without the pipeline failing (as with one camera). Viewers
// of a camera that is down stay connected and see it again at its next keyframe.
// With failFast (the single-camera `serve`), the one camera opening fails the constructor, and a
// failure ends it (failure()), exactly as a lone Pipeline.
//
// Cameras on one GPU share its CUDA context (the runtime API's primary context, one per device per
// process); each camera names its device (CameraConfig::gpu) or is placed by load ("auto": the
// least-loaded device, heaviest camera first, docs/multi-gpu.md), once, in the constructor.
//
// Thread-safety: thread-safe; construct, start() and stop() from one controlling thread. Owns the
// StreamServer, one supervising thread per camera (which owns that camera's Pipeline) and the
// pipelines' threads.

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "zerohop/encoder.hpp"
#include "zerohop/error.hpp"
#include "zerohop/export.h"
#include "zerohop/pipeline.hpp"
#include "zerohop/source.hpp"
#include "zerohop/stream_server.hpp"

namespace zerohop {

struct CameraConfig {
  std::string name;          ///< [A-Za-z0-9_-]+: the URL /whep/NAME and the label in /stats and /metrics
  SourceSpec source;         ///< any source serve takes: test:, v4l2:, share:
  EncoderConfig encoder;     ///< width/height/fps are taken from the source
  std::string gpu = "auto";  ///< "auto", "off" or the CUDA device number (PipelineConfig::gpu)
  std::string shareName;     ///< non-empty: share frames as NAME, H.264 as NAME.h264 (and sound as NAME.opus)
  std::string renditions = "auto";  ///< the ladder of renditions (PipelineConfig::renditions)
  /// The camera's sound, sent to WebRTC viewers beside its picture: "" (none), "test" (a tone clicking
  /// at every A/V marker instant of the capture clock), "alsa:DEVICE" (docs/audio.md).
  std::string audio;
  /// Milliseconds of sound in each Opus packet of an encoded `audio`: 10 (the sound plays ~7 ms sooner in
  /// a browser than with 20), or 20 (half the packets: ~20 kb/s less per viewer in headers; docs/audio.md).
  /// Not used where the camera's own Opus is passed on as it came (audio "rtsp" from an Opus camera).
  std::uint32_t audioFrameMs = 10;
  /// The camera's own outputs beside its WHEP viewers (PipelineConfig::whipUrl, whipToken, janus): a WHIP
  /// endpoint it publishes to (with the camera's sound, if it has one) and an RTP target (a Janus
  /// streaming mountpoint); empty: none. Each camera its own, configured once.
  std::string whipUrl;
  std::string whipToken;  ///< never logged
  bool whipSimulcast = false;  ///< PipelineConfig::whipSimulcast
  std::string janus;
  /// The camera's recording (PipelineConfig::recordPath, recordSegmentSeconds): FILE.mp4 or FILE.mkv,
  /// its sound beside the picture when it has one; empty: none. Two cameras cannot record to one file.
  std::string recordPath;
  double recordSegmentSeconds = 0;
};

struct CameraServerConfig {
  std::vector<CameraConfig> cameras;  ///< at least one; the first also answers POST /whep
  /// The one HTTP server (its defaultStream is set to the first camera); its ICE servers are also those
  /// of every camera's WHIP session.
  StreamConfig stream;
  bool failFast = false;  ///< see the header comment
  /// From this many cameras on, MJPEG cameras on the GPU path share one batched nvJPEG decoder per
  /// GPU (PipelineConfig::batchJpeg): more cameras per GPU, each frame decoded whole. Below it each
  /// camera has its own decoder, which splits a frame at its restart markers over several JPEG
  /// engines (lower latency for a few cameras). 0: never batch.
  std::size_t batchJpegCameras = 8;
};

/// What one camera is doing now.
struct CameraStatus {
  std::string name;
  std::string state;  ///< "opening", "running", or "retrying" (failed; opened again after a back-off)
  /// The last failure, with its code (Error::code(): e.g. kNotFound for a camera that is not
  /// plugged in, kUnavailable for one another program holds) and message; nullopt while running
  /// after a clean open.
  std::optional<Error> error;
  std::uint64_t restarts = 0;  ///< times its pipeline failed and was opened again
  bool hasPipeline = false;    ///< `pipeline` is valid (state "running")
  PipelineStatus pipeline;
};

/// Throws Error(kInvalidArgument) naming the camera when the list cannot be served: none at all, a
/// name empty or not of [A-Za-z0-9_-], two cameras with one name, one V4L2 device (or share) named
/// by two cameras, two cameras with one share name.
ZEROHOP_API void checkCameras(const std::vector<CameraConfig>& cameras);

/// True when `name` is a usable camera name: 1 to 64 of [A-Za-z0-9_-].
ZEROHOP_API bool isValidCameraName(const std::string& name);

class ZEROHOP_API CameraServer {
 public:
  /// Checks the cameras (checkCameras), binds the port; with failFast opens the camera(s) now. Throws Error.
  explicit CameraServer(CameraServerConfig config);
  ~CameraServer();  ///< stops and joins everything
  CameraServer(const CameraServer&) = delete;
  CameraServer& operator=(const CameraServer&) = delete;

  /// Starts every camera (each opens on its own thread unless failFast opened it already).
  void start();
  void stop() noexcept;  ///< idempotent; returns once every thread has exited

  std::vector<CameraStatus> cameras() const;
  std::string statsJson()
      const;  ///< GET /stats: the first camera's figures at the top level, "cameras": every camera
  std::string metricsText() const;  ///< GET /metrics: every series with a `camera` label
  std::string url() const;          ///< "http://HOST:PORT/"
  /// failFast: the first error that ended a camera (its code and message; with several cameras the
  /// message names the camera), or nullopt. Without failFast always nullopt.
  std::optional<Error> failure() const;

 private:
  class Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace zerohop
