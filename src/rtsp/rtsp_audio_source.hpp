#pragma once
// An RTSP camera's own sound as an audio source (`audio = "rtsp"`, `serve --audio rtsp`): the audio
// stream of an RtspSession (rtsp_session.hpp),
//   rtspsrc (RTCP SR times as reference-timestamp metas) -> decodebin (the depayloader and decoder of the
//     camera's codec: PCMU/PCMA (G.711), AAC (MPEG4-GENERIC), Opus, L16) -> audioconvert ->
//     audioresample -> S16LE, mono, 48 kHz -> appsink
//   or, for a camera's Opus, rtpopusdepay -> appsink: its packets as they came (AudioFrame::opus), which
//     AudioTrack passes on without a decode or an encode (RtspAudioPolicy::passOpus)
// either beside the picture (RtspAudioSource::kBesideThePicture, what serve uses): the camera's one RTSP
// session, which its picture's RtspSource opens, reconnects with back-off and shares (rtsp_connection.hpp),
// so the camera sees one connection for both; or on its own (kOwnConnection: a connection that sets up the
// audio stream only, reconnected here with back-off).
// Each block is stamped on the capture clock with the mapping the camera's video uses (captureTimeOf: the
// camera's wall clock from its RTCP sender reports; before the first report, the arrival), so the sound
// and the picture of one camera share a clock. A lost connection is retried with back-off (counters:
// errors, reopens); beside the picture the sound comes back with the picture's next connection. A camera
// with no audio stream or with a codec zerohop does not take (named) ends the source with an Error saying
// so (AudioTrack logs it and counts a failure; the picture plays on); so do a 401 or a 404 on a connection
// of its own.
// Thread-safety: next() is thread-bound (the capture thread); info() and counters() are thread-safe.
// Ownership: owns its connection (one GStreamer pipeline), stopped by the destructor.

#include <atomic>
#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>

#include "audio/audio_source.hpp"
#include "rtsp/rtsp_timing.hpp"
#include "rtsp/rtsp_url.hpp"
#include "zerohop/source.hpp"

namespace zerohop::rtsp {

/// How an RtspAudioSource reconnects.
struct RtspAudioPolicy {
  std::chrono::milliseconds firstRetry{500};     ///< first reconnect after a loss, doubling ...
  std::chrono::milliseconds maxRetry{10000};     ///< ... up to this
  std::chrono::milliseconds stallTimeout{5000};  ///< no sound this long once it flowed: reconnect
  /// A camera's Opus handed on as it came (a connection of its own; beside the picture it always is).
  bool passOpus = true;
};

class RtspConnection;
class RtspSession;
struct ArrivedBlock;

class RtspAudioSource final : public audio::AudioSource {
 public:
  enum Connection : std::uint8_t {
    kOwnConnection,     ///< a connection of its own that sets up the audio stream only
    kBesideThePicture,  ///< the camera's connection its picture (RtspSource of the same URL) opens
  };

  /// kOwnConnection starts connecting (on GStreamer's threads; the constructor does not wait for the
  /// camera) and throws Error(kUnsupported) when a GStreamer element is missing, naming the Debian package.
  /// kBesideThePicture attaches to the camera's connection: open it before the picture's source, so the
  /// picture's first session carries the sound.
  explicit RtspAudioSource(const RtspUrl& url, RtspAudioPolicy policy = {},
                           Connection connection = kOwnConnection);
  ~RtspAudioSource() override;
  RtspAudioSource(const RtspAudioSource&) = delete;
  RtspAudioSource& operator=(const RtspAudioSource&) = delete;

  audio::AudioSourceInfo info() const override;
  /// The next block (interleaved S16, mono, 48 kHz; or one of the camera's Opus packets, AudioFrame::opus),
  /// nullopt at `timeout` (also while a reconnect waits).
  /// Throws Error: kNotFound (the camera offers no audio stream; 404), kUnsupported (a
  /// codec zerohop does not take, named), kUnavailable (401).
  std::optional<audio::AudioFrame> next(std::chrono::milliseconds timeout) override;
  audio::AudioSourceCounters counters() const override;
  /// The clock of the last block's capture time (kCamera once a sender report came).
  CaptureClock clock() const { return clock_.load(); }

 private:
  void startSession(std::shared_ptr<RtspSession> session);
  std::optional<audio::AudioFrame> deliver(ArrivedBlock&& block);

  RtspUrl url_;
  std::string name_;  // the masked URL
  RtspAudioPolicy policy_;
  std::shared_ptr<RtspConnection> connection_;  // kBesideThePicture: the camera's, shared with its picture
  std::uint64_t generation_ = 0;                // of the connection's session taken last
  std::shared_ptr<RtspSession> session_;
  bool stallSaid_ = false;  // beside the picture: this session's silence was logged
  std::int64_t nextAttemptNs_ = 0;
  std::int64_t lastBlockNs_ = 0;
  std::chrono::milliseconds delay_{0};
  bool outage_ = false;  // lost and not yet back
  bool sessionDelivered_ = false;
  bool arrivalAnchored_ = false;      // arrivalOffsetNs_ is set (this session)
  std::int64_t arrivalOffsetNs_ = 0;  // the least (arrival - length - RTP time) of this session's blocks
  std::uint64_t sequence_ = 0;
  std::atomic<CaptureClock> clock_{CaptureClock::kArrival};
  bool clockLogged_[3] = {false, false, false};
  std::atomic<std::uint64_t> blocks_{0}, errors_{0}, reopens_{0}, dropped_{0};
};

/// The sound of the camera an `rtsp` source spec names, beside its picture (RtspAudioSource,
/// kBesideThePicture: open it before the picture). Throws Error(kInvalidArgument) for a spec of another kind.
std::unique_ptr<audio::AudioSource> openRtspAudioSource(const SourceSpec& spec);

}  // namespace zerohop::rtsp
