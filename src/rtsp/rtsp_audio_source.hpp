#pragma once
// An RTSP camera's own sound as an audio source (`audio = "rtsp"`, `serve --audio rtsp`): a connection of
// its own to the camera that sets up the camera's first audio stream only:
//   rtspsrc (RTCP SR times as reference-timestamp metas) -> decodebin (the depayloader and decoder of the
//     camera's codec: PCMU/PCMA (G.711), AAC (MPEG4-GENERIC), Opus, L16, ...) -> audioconvert ->
//     audioresample -> S16LE, mono, 48 kHz -> appsink
// Each block is stamped on the capture clock with the mapping the camera's video uses (captureTimeOf: the
// camera's wall clock from its RTCP sender reports; before the first report, the arrival), so the sound
// and the picture of one camera share a clock. A lost connection is retried with back-off (counters:
// errors, reopens). A camera with no audio stream, a codec no installed decoder takes, a 401 or a 404 end
// the source with an Error saying so (AudioTrack logs it and counts a failure; the picture plays on).
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
  std::chrono::milliseconds firstRetry{500};    ///< first reconnect after a loss, doubling ...
  std::chrono::milliseconds maxRetry{10000};    ///< ... up to this
  std::chrono::milliseconds stallTimeout{5000};  ///< no sound this long once it flowed: reconnect
};

class RtspAudioSession;

class RtspAudioSource final : public audio::AudioSource {
 public:
  /// Starts connecting (on GStreamer's threads; the constructor does not wait for the camera). Throws
  /// Error(kUnsupported) when a GStreamer element is missing, naming the Debian package.
  explicit RtspAudioSource(const RtspUrl& url, RtspAudioPolicy policy = {});
  ~RtspAudioSource() override;
  RtspAudioSource(const RtspAudioSource&) = delete;
  RtspAudioSource& operator=(const RtspAudioSource&) = delete;

  audio::AudioSourceInfo info() const override;
  /// The next block (interleaved S16, mono, 48 kHz), nullopt at `timeout` (also while a reconnect waits).
  /// Throws Error: kNotFound (the camera offers no audio stream; 404), kUnsupported (no installed decoder
  /// for its codec, named), kUnavailable (401).
  std::optional<audio::AudioFrame> next(std::chrono::milliseconds timeout) override;
  audio::AudioSourceCounters counters() const override;
  /// The clock of the last block's capture time (kCamera once a sender report came).
  CaptureClock clock() const { return clock_.load(); }

 private:
  void startSession();

  RtspUrl url_;
  std::string name_;  // the masked URL
  RtspAudioPolicy policy_;
  std::unique_ptr<RtspAudioSession> session_;
  std::int64_t nextAttemptNs_ = 0;
  std::int64_t lastBlockNs_ = 0;
  std::chrono::milliseconds delay_{0};
  bool outage_ = false;          // lost and not yet back
  bool sessionDelivered_ = false;
  bool arrivalAnchored_ = false;    // arrivalOffsetNs_ is set (this session)
  std::int64_t arrivalOffsetNs_ = 0;  // the least (arrival - length - RTP time) of this session's blocks
  std::uint64_t sequence_ = 0;
  std::atomic<CaptureClock> clock_{CaptureClock::kArrival};
  bool clockLogged_[3] = {false, false, false};
  std::atomic<std::uint64_t> blocks_{0}, errors_{0}, reopens_{0}, dropped_{0};
};

/// The sound of the camera an `rtsp` source spec names (RtspAudioSource). Throws Error(kInvalidArgument)
/// for a spec of another kind.
std::unique_ptr<audio::AudioSource> openRtspAudioSource(const SourceSpec& spec);

}  // namespace zerohop::rtsp
