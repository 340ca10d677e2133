#pragma once
// One connection to an RTSP camera: a GStreamer pipeline
//   rtspsrc (TCP interleaved or UDP; Basic/Digest; RTCP SR times as reference-timestamp metas)
//     -> rtph264depay -> h264parse (SPS/PPS before every IDR; byte-stream, one access unit a buffer) ->
//        appsink                                                 (the picture: SessionStreams::video)
//     or rtph265depay -> h265parse (VPS/SPS/PPS before every IDR) -> appsink   (an H.265 camera's picture)
//     -> decodebin (the camera's audio codec) -> audioconvert -> audioresample -> S16LE, mono, 48 kHz ->
//        appsink                                                 (the sound: SessionStreams::audio)
//     or rtpopusdepay -> appsink: a camera's Opus as it came, one packet a block (SessionStreams::passOpus)
// started by the constructor and stopped by stop() or the destructor. Only the streams asked for are set
// up (select-stream: the camera's first H.264 or H.265 video stream, its first audio stream in a codec
// zerohop takes), so the others cost nothing; picture and sound share the one RTSP connection. GStreamer's
// streaming threads hand access units, sound blocks and failures to the threads that call wait() (the
// picture) and waitAudio() (the sound), through queues that drop the oldest (live media never blocks the
// camera). A fault of the sound alone (no audio stream, a codec zerohop does not take) is the sound's
// failure only: the picture goes on.
// Thread-safety: wait() is bound to one consumer thread, waitAudio() to another; stop(), dropped(),
// audioDropped(), offered() and videoCodec() are thread-safe. The samples it hands out own their buffers and
// may outlive it.

#include <gst/gst.h>

#include <condition_variable>
#include <cstdint>
#include <deque>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include "rtsp/rtsp_url.hpp"
#include "rtsp/video_codec.hpp"

namespace zerohop::rtsp {

struct SampleUnref {
  void operator()(GstSample* s) const noexcept {
    if (s) gst_sample_unref(s);
  }
};
using SamplePtr = std::unique_ptr<GstSample, SampleUnref>;

/// One access unit (H.264 or H.265, as the session's videoCodec()) as it arrived.
struct ArrivedUnit {
  SamplePtr sample;
  std::int64_t arrivalMonotonicNs = 0;
  std::int64_t arrivalRealtimeNs = 0;
};

/// One block of the camera's decoded sound, or one of its Opus packets, as it arrived.
struct ArrivedBlock {
  std::vector<std::int16_t> samples;  ///< mono, 48 kHz
  std::vector<std::uint8_t> opus;     ///< or (samples empty) one Opus packet as the camera sent it
  std::int64_t ptsNs = -1;            ///< the pipeline's timestamp of its first sample (-1: none)
  std::uint64_t ntpNs = 0;  ///< the camera's wall clock of its first sample (0: no sender report yet)
  std::int64_t arrivalMonotonicNs = 0;
  std::int64_t arrivalRealtimeNs = 0;
};

/// Which of the camera's streams a session sets up.
struct SessionStreams {
  bool video = true;   ///< its first H.264 or H.265 video stream
  bool audio = false;  ///< its first audio stream in a codec zerohop takes (PCMU, PCMA, AAC, Opus, L16)
  /// A camera's Opus handed on as it came (ArrivedBlock::opus), not decoded: the receivers take Opus.
  bool passOpus = true;
  /// false: DESCRIBE (and SETUP) only, never PLAY: the pipeline stays PAUSED and no media flows; the
  /// camera's streams are read with waitDescribed() (`zerohop probe`).
  bool play = true;
};

/// The video stream a camera's SDP describes (RtspSession::waitDescribed).
struct DescribedVideo {
  VideoCodec codec = VideoCodec::kH264;
  /// Its fmtp's parameter sets, base64 NAL units: H.264's sprop-parameter-sets; H.265's sprop-vps, then
  /// sprop-sps. Empty when the SDP carries none (the SPS then comes in band, with the first IDR).
  std::vector<std::string> parameterSets;
  double sdpFramerate = 0;  ///< its `a=framerate` (RFC 4566), 0 when absent
};

/// Why a connection ended; the kind decides how soon the source tries again.
enum class FailureKind : std::uint8_t {
  kUnauthorized,    ///< 401: wrong or missing credentials (retried slowly: no fast retry loop)
  kNotFound,        ///< 404: no stream at that path
  kUnreachable,     ///< cannot connect, connection lost
  kNoUsableStream,  ///< the camera offers no H.264 or H.265 video
  kNoUsableAudio,   ///< the camera offers no audio stream in a codec zerohop takes (the sound's alone)
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
  static constexpr std::size_t kAudioQueueBlocks = 50;  ///< about a second of the camera's packets

  /// Builds and starts the pipeline (connecting happens on GStreamer's threads). Throws Error
  /// (kUnsupported) when a GStreamer element is missing, naming the Debian package.
  explicit RtspSession(const RtspUrl& url, SessionStreams streams = {});
  ~RtspSession();
  RtspSession(const RtspSession&) = delete;
  RtspSession& operator=(const RtspSession&) = delete;

  /// The next access unit, or the failure that ended the connection (after the units that came before
  /// it), or std::monostate at `deadlineMonotonicNs`.
  std::variant<std::monostate, ArrivedUnit, SessionFailure> wait(std::int64_t deadlineMonotonicNs);
  /// The next block of sound, or the failure that ended the connection or the sound alone
  /// (kNoUsableAudio: no audio stream, or a codec zerohop does not take, named), or std::monostate at
  /// `deadlineMonotonicNs`.
  std::variant<std::monostate, ArrivedBlock, SessionFailure> waitAudio(std::int64_t deadlineMonotonicNs);

  /// Ends the connection now (idempotent; no GStreamer callback runs after it): both waits return
  /// `why` once their queues are empty.
  void stop(const SessionFailure& why);

  std::uint64_t dropped() const;
  std::uint64_t audioDropped() const;
  /// Once every stream of the camera's SDP was seen: its video stream, or the failure (no H.264 or H.265
  /// video, 401, unreachable, ...), or std::monostate at `deadlineMonotonicNs`. For a session that does
  /// not play (SessionStreams::play false); after it, offered() lists every stream.
  std::variant<std::monostate, DescribedVideo, SessionFailure> waitDescribed(std::int64_t deadlineMonotonicNs);

  /// The streams the camera's SDP offered, "video H264/90000, audio PCMA/8000" (empty before DESCRIBE).
  std::string offered() const;
  /// The codec of the video stream set up (known once a unit came).
  VideoCodec videoCodec() const;

  struct Shared;  ///< what GStreamer's threads write (queue, failure, offered streams); opaque, for the
                  ///< callbacks

 private:
  std::shared_ptr<Shared> shared_;
  GstElement* pipeline_ = nullptr;
  std::once_flag stopped_;
};

}  // namespace zerohop::rtsp
