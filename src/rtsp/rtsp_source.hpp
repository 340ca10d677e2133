#pragma once
// An IP camera as a FrameSource: `rtsp://[user:password@]host[:port]/path[?protocols=tcp|udp&latency=MS]`.
//
// The camera's H.264 access units (rtspsrc -> rtph264depay -> h264parse, SPS/PPS before every IDR) become
// H.264 frames, which the pipeline passes through to WebRTC viewers with no decode and no encode, as it
// does a V4L2 H.264 camera's. Each frame is a lease on the GstSample it arrived in (no copy here).
// Capture time: the camera's wall clock from its RTCP sender reports when it has sent one and its clock is
// in step with this host's, else the arrival (rtsp_timing.hpp); the first frame timed each way is logged.
// The connection is the camera's one RTSP session (rtsp_connection.hpp): when its sound is served too
// (`audio = "rtsp"`), the same session carries the audio stream to RtspAudioSource.
// Faults: a connection that fails or ends, sends nothing for RtspPolicy::stallTimeout, or no IDR for
// RtspPolicy::idrTimeout, is logged (the camera named, credentials masked), counted as a stall, and reopened
// with back-off; a 401 waits
// RtspPolicy::unauthorizedRetry before the next try (no fast retry loop against a camera that locks
// accounts). Opening (the constructor) connects and waits for the first IDR, to learn the size; each
// connection starts at an IDR (the units before it cannot be decoded and are skipped). A keyframe request
// cannot reach the camera (RTSP has none): requestKeyframe() is false. `format=i420` wraps it in a
// DecodedH264Source (decoded_source.hpp: frames for --share and VP8 viewers). An H.265 camera (rtph265depay ->
// h265parse) is always wrapped so (openRtspSource): WebRTC viewers take no H.265 as it is, so its pictures
// are decoded on the CPU and encoded again; its RtspSource's units have no PixelFormat (kUnknown, codec()
// says H.265) and go to the decoder only. The spec refuses size and fps options saying so.
// Thread-safety: thread-bound (one thread calls next()), except counters() and requestKeyframe()
// (thread-safe); its FrameLeases may be released on any thread and may outlive it.

#include <array>
#include <atomic>
#include <chrono>
#include <memory>
#include <mutex>
#include <string_view>

#include "rtsp/rtsp_timing.hpp"
#include "rtsp/rtsp_url.hpp"
#include "rtsp/video_codec.hpp"
#include "zerohop/source.hpp"

namespace zerohop {

/// `rtsp://...` as a source spec (kind "rtsp"): path is the camera's URL without credentials or
/// zerohop's options; options hold user, password, protocols and latency. Throws Error like parseSourceSpec.
SourceSpec parseRtspSourceSpec(std::string_view text);
/// The spec as printed: the URL with its credentials masked (`rtsp://***@host/path`).
std::string rtspSourceString(const SourceSpec& spec);
/// Opens an RTSP camera (RtspSource). SourceOptions do not apply (the frames are GStreamer's buffers).
std::unique_ptr<FrameSource> openRtspSource(const SourceSpec& spec, const SourceOptions& options = {});

/// What an RTSP camera offers, for `zerohop probe rtsp://...`.
struct RtspCameraInfo {
  std::string offered;  ///< every stream of its SDP: "video H264/90000, audio PCMA/8000"
  SourceInfo video;     ///< its video: size and rate as its SPS states them
  std::string codec;    ///< "H.264" or "H.265"
  /// false: the size and rate are what the SDP's parameter sets state (nothing was played); true: the SDP
  /// stated none (no SPS, or one without a rate), so the stream was played up to its first keyframe.
  bool played = false;
};
/// Connects and reads the camera's SDP (DESCRIBE, no PLAY); when its parameter sets state the size and
/// rate, that is all; else it plays the stream up to one keyframe and reads them from its SPS. Then
/// disconnects. Throws Error as opening the source does.
RtspCameraInfo probeRtspCamera(const SourceSpec& spec);

namespace rtsp {

/// The camera's URL, credentials and zerohop's options of an `rtsp` source spec (parseRtspSourceSpec's).
RtspUrl rtspUrlOf(const SourceSpec& spec);

/// How an RtspSource connects and reconnects.
struct RtspPolicy {
  std::chrono::milliseconds openTimeout{10000};        ///< the constructor's wait for the first IDR
  std::chrono::milliseconds firstRetry{500};           ///< first reconnect after a loss, doubling ...
  std::chrono::milliseconds maxRetry{10000};           ///< ... up to this
  std::chrono::milliseconds unauthorizedRetry{30000};  ///< after a 401
  std::chrono::milliseconds stallTimeout{5000};  ///< no access unit this long: the connection is dropped
  /// Units but no IDR this long after the last one: the connection is dropped (a new one starts at an IDR),
  /// so viewers that join are not left waiting on a camera whose keyframes are lost or too far apart.
  std::chrono::milliseconds idrTimeout{10000};
};

class RtspConnection;
class RtspSession;
struct SessionFailure;
struct ArrivedUnit;

class RtspSource final : public FrameSource {
 public:
  /// Connects and waits for the first IDR (up to policy.openTimeout). Throws Error: kUnavailable
  /// (unreachable, 401, no IDR in time), kNotFound (404), kUnsupported (no H.264 or H.265 video offered,
  /// GStreamer element missing).
  RtspSource(const RtspUrl& url, RtspPolicy policy = {});
  ~RtspSource() override;
  SourceInfo info() const override { return info_; }
  std::optional<FrameLease> next(std::chrono::milliseconds timeout) override;
  SourceCounters counters() const override;
  /// The streams the camera's SDP offered ("video H264/90000, audio PCMA/8000").
  const std::string& offered() const { return offered_; }
  /// The camera's video codec (its units: H.264, or H.265 with info().format kUnknown).
  VideoCodec codec() const { return codec_; }

 private:
  class Leases;
  void open();  // the constructor's: connects and waits for the first IDR
  FrameLease deliver(ArrivedUnit&& unit);
  void lose(const SessionFailure& failure);
  void startSession();
  void countSessionDrops();
  void noteClock(const CaptureTime& t);

  RtspUrl url_;
  std::string name_;  // the masked URL, for log lines
  RtspPolicy policy_;
  std::shared_ptr<Leases> leases_;
  std::shared_ptr<RtspConnection> connection_;  // shared with the camera's sound (rtsp_connection.hpp)
  std::shared_ptr<RtspSession> session_;
  std::unique_ptr<ArrivedUnit> pending_;  // the first unit, read by the constructor
  SourceInfo info_;
  std::string offered_;
  VideoCodec codec_ = VideoCodec::kH264;
  std::int64_t lastUnitNs_ = 0;
  std::int64_t lastIdrNs_ = 0;  // the current connection's last IDR
  std::int64_t nextAttemptNs_ = 0;
  std::chrono::milliseconds delay_{0};
  bool outage_ = false;                // lost and not yet back
  std::array<bool, 3> clockLogged_{};  // per CaptureClock: its first frame was logged
  std::uint64_t sequence_ = 0;
  std::uint64_t sessionUnits_ = 0;      // access units of the current session
  std::uint64_t sessionDropsSeen_ = 0;  // the current session's queue drops already counted
  std::atomic<std::uint64_t> frames_{0}, drops_{0}, stalls_{0};
  std::atomic<CaptureOrigin> origin_{CaptureOrigin::kArrival};  // of the last unit (counters())
};

}  // namespace rtsp
}  // namespace zerohop
