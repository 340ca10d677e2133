#pragma once
// One connection to an RTSP camera: a GStreamer pipeline
//   rtspsrc (TCP interleaved or UDP; Basic/Digest; RTCP SR times as reference-timestamp metas)
//     -> rtph264depay -> h264parse (SPS/PPS before every IDR; byte-stream, one access unit a buffer) ->
//     appsink
// started by the constructor and stopped by the destructor. Only the camera's first H.264 video stream is
// set up (select-stream), so audio and other streams cost nothing. GStreamer's streaming threads hand
// access units and failures to the thread that calls wait(), through a queue of kQueueDepth units that
// drops the oldest (live video never blocks the camera).
// Thread-safety: wait() and the destructor are thread-bound (one consumer); dropped() and offered() are
// thread-safe. The samples it hands out own their buffers and may outlive it.

#include <gst/gst.h>

#include <condition_variable>
#include <cstdint>
#include <deque>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <variant>

#include "rtsp/rtsp_url.hpp"

namespace zerohop::rtsp {

struct SampleUnref {
  void operator()(GstSample* s) const noexcept {
    if (s) gst_sample_unref(s);
  }
};
using SamplePtr = std::unique_ptr<GstSample, SampleUnref>;

/// One H.264 access unit as it arrived.
struct ArrivedUnit {
  SamplePtr sample;
  std::int64_t arrivalMonotonicNs = 0;
  std::int64_t arrivalRealtimeNs = 0;
};

/// Why a connection ended; the kind decides how soon the source tries again.
enum class FailureKind : std::uint8_t {
  kUnauthorized,    ///< 401: wrong or missing credentials (retried slowly: no fast retry loop)
  kNotFound,        ///< 404: no stream at that path
  kUnreachable,     ///< cannot connect, connection lost
  kNoUsableStream,  ///< the camera offers no H.264 video
  kEnded,           ///< the camera ended the stream (EOS)
  kStalled,         ///< no access unit for a while (set by the source, not the session)
  kOther,
};

struct SessionFailure {
  FailureKind kind = FailureKind::kOther;
  std::string message;  ///< in words, credentials masked
};

class RtspSession {
 public:
  static constexpr std::size_t kQueueDepth = 4;

  /// Builds and starts the pipeline (connecting happens on GStreamer's threads). Throws Error
  /// (kUnsupported) when a GStreamer element is missing, naming the Debian package.
  explicit RtspSession(const RtspUrl& url);
  ~RtspSession();
  RtspSession(const RtspSession&) = delete;
  RtspSession& operator=(const RtspSession&) = delete;

  /// The next access unit, or the failure that ended the connection (after the units that came before
  /// it), or std::monostate at `deadlineMonotonicNs`.
  std::variant<std::monostate, ArrivedUnit, SessionFailure> wait(std::int64_t deadlineMonotonicNs);

  std::uint64_t dropped() const;
  /// The streams the camera's SDP offered, "video H264/90000, audio PCMA/8000" (empty before DESCRIBE).
  std::string offered() const;

  struct Shared;  ///< what GStreamer's threads write (queue, failure, offered streams); opaque, for the
                  ///< callbacks

 private:
  std::shared_ptr<Shared> shared_;
  GstElement* pipeline_ = nullptr;
};

}  // namespace zerohop::rtsp
