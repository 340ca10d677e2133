#pragma once
// One sound source of a camera, encoded once for every receiver: a capture thread (AudioSource::next,
// real time) -> AudioQueue (drop-oldest, kQueueBlocks) -> an encode thread (one OpusAudioEncoder,
// 48 kHz, 5, 10 or 20 ms packets: OpusSettings::frameMs) -> `deliver`, each packet as an EncodedUnit (bytes:
// one Opus packet; ptsNs: the CLOCK_MONOTONIC capture instant of the sound its first decoded sample plays,
// the encoder's lookahead taken out (OpusPacket::captureNs), the clock video frames carry; keyframe: true,
// every Opus packet decodes alone). The receivers (WhepStream::publishAudio) fan it out. A block that is
// already an Opus packet (AudioFrame::opus: an RTSP camera's own) is passed on as it came, neither decoded
// nor encoded again: its bytes, its capture instant; the encoder then stays unused (the in-band FEC is what
// the camera's encoder set). A source that fails for good (an error other than a lost device, which
// ReconnectingAudioSource reopens) is logged and counted; the picture beside it never waits on sound.
// Thread-safety: thread-safe (start/stop from the owner's thread; stats() from any).
// Ownership: owns its source, encoder and threads; stop() (or the destructor) joins them.

#include <atomic>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>

#include "audio/audio_source.hpp"
#include "audio/opus_encoder.hpp"
#include "zerohop/encoded_unit.hpp"

namespace zerohop::audio {

/// The source a spec names, opened now: "test" (ToneSource: the tone that clicks at every A/V marker
/// instant), "alsa:DEVICE" (openAlsaSource: reconnecting, resampled through plug where needed).
/// `blockFrames`: sample frames a block (a device's period), 480 (10 ms) by default; shorter packets
/// need shorter blocks (a 5 ms packet waits for a whole block). Throws Error(kInvalidArgument) for
/// another spec (the message lists the kinds), and what the source throws when it cannot open
/// (kNotFound, kUnavailable, ...).
std::unique_ptr<AudioSource> openAudioSource(const std::string& spec, std::uint32_t blockFrames = 480);

/// What an AudioTrack did so far.
struct AudioTrackStats {
  std::string source;            ///< "test", "alsa:hw:1,0"
  AudioSourceCounters capture;   ///< the source's blocks, overruns, errors, reopens
  std::uint64_t queueDrops = 0;  ///< blocks the encode thread was too late for (drop-oldest)
  std::uint64_t packets = 0;     ///< Opus packets made or passed on
  std::uint64_t passed = 0;      ///< of those, the source's own packets passed on as they came (no encode)
  double encodeMsPerFrame = 0;   ///< mean time of one packet's encode, over the last 50 packets
  std::uint64_t failures = 0;    ///< source errors it could not recover from (then it stops, logged)
  std::string lastError;         ///< the last such error's words (empty: none)
  bool running = false;
  /// The loss the Opus encoder's in-band FEC is set for (setLossProbe): the worst viewer's reported loss,
  /// rounded, at most kMaxExpectedLossPercent; 0 without viewers or loss (FEC then spends no bits).
  std::uint32_t expectedLossPercent = 0;
};

class AudioTrack {
 public:
  using Deliver = std::function<void(EncodedUnitPtr)>;
  /// Blocks (10 ms each) waiting for the encode thread before the oldest is dropped: 320 ms, so a busy
  /// machine that holds the encode thread back for a while loses no sound (a drop is a gap the viewer
  /// conceals); the encode of a block takes well under a millisecond, so the queue is empty otherwise.
  static constexpr std::size_t kQueueBlocks = 32;
  /// The most loss the in-band FEC is set for: beyond it LBRR takes bits the sound needs more.
  static constexpr std::uint32_t kMaxExpectedLossPercent = 30;
  /// Returns the worst loss (percent) the listeners report now, < 0 when none is known.
  using LossProbe = std::function<double()>;

  /// Takes an opened source; `deliver` is called on the encode thread, must not block.
  AudioTrack(std::unique_ptr<AudioSource> source, OpusSettings opus, Deliver deliver);
  /// Before start(): the encode thread asks `probe` once a second and sets the encoder's expected loss
  /// (OPUS_SET_PACKET_LOSS_PERC) from it, so in-band FEC protects the sound while listeners lose packets
  /// and costs nothing while they do not. `probe` must be thread-safe and not block.
  void setLossProbe(LossProbe probe) { lossProbe_ = std::move(probe); }
  ~AudioTrack();
  AudioTrack(const AudioTrack&) = delete;
  AudioTrack& operator=(const AudioTrack&) = delete;

  void start();
  /// Joins both threads; idempotent.
  void stop() noexcept;
  AudioTrackStats stats() const;

 private:
  void capture();
  void encode();
  void followLoss(std::int64_t nowNs);  // the encode thread: the probe, at most once a second
  void pass(AudioFrame&& packet);       // the encode thread: a source's own Opus packet, as it came

  std::unique_ptr<AudioSource> source_;
  OpusAudioEncoder encoder_;
  Deliver deliver_;
  LossProbe lossProbe_;               // set before start(), read by the encode thread
  std::int64_t lossCheckedNs_ = 0;    // the encode thread's
  double smoothedLoss_ = 0;           // the encode thread's: the reports smoothed (fec_loss.hpp)
  AudioQueue queue_{kQueueBlocks};
  std::atomic<bool> stop_{false};
  std::thread captureThread_, encodeThread_;
  mutable std::mutex statsMutex_;
  AudioTrackStats stats_;  // under statsMutex_ (source and capture are read live)
  double encodeNsWindow_ = 0;
  unsigned encodeWindowCount_ = 0;
  std::uint64_t passSequence_ = 0;  // the encode thread's: packets passed on
};

}  // namespace zerohop::audio
