#pragma once
// ALSA capture (alsa-lib snd_pcm_*): a device string as alsa-lib takes it ("hw:1,0", "plughw:1,0",
// "default", or any PCM an asoundrc defines), 48 kHz S16 interleaved, 10 ms periods. A device that
// cannot do 48 kHz S16 is refused with the fix (its plughw: twin, where alsa-lib converts and
// resamples). Faults: an overrun (EPIPE) is recovered with snd_pcm_prepare and counted; a suspend
// (ESTRPIPE) likewise; an unplug (ENODEV) throws kUnavailable, which ReconnectingAudioSource turns
// into a reopen with back-off.
// Thread-safety: thread-bound (the capture thread), except info() and counters() (thread-safe).
// Owns its snd_pcm_t (closed on destruction).

#include <atomic>
#include <functional>
#include <memory>
#include <mutex>
#include <string>

#include "audio/audio_source.hpp"

typedef struct _snd_pcm snd_pcm_t;  // alsa-lib

namespace zerohop::audio {

struct AlsaSettings {
  std::string device = "default";  ///< alsa-lib PCM name
  std::uint32_t channels = 1;
  std::uint32_t periodFrames = 480;  ///< 10 ms at 48 kHz
  std::uint32_t periods = 4;         ///< ring of the device: 40 ms before an overrun
};

class AlsaSource final : public AudioSource {
 public:
  /// Opens and starts capture. Throws Error naming the device and the fix: kNotFound (no such
  /// device), kUnavailable (busy in another program), kUnsupported (refuses 48 kHz S16 / the channels).
  explicit AlsaSource(const AlsaSettings& settings);
  ~AlsaSource() override;
  AlsaSource(const AlsaSource&) = delete;
  AlsaSource& operator=(const AlsaSource&) = delete;

  AudioSourceInfo info() const override;
  std::optional<AudioFrame> next(std::chrono::milliseconds timeout) override;
  AudioSourceCounters counters() const override;

 private:
  struct PcmCloser {
    void operator()(snd_pcm_t* p) const noexcept;
  };
  /// Restarts after an overrun or suspend; throws if the device is gone.
  void recover(int err);
  [[noreturn]] void fail(const char* call, int err) const;

  AlsaSettings settings_;
  std::unique_ptr<snd_pcm_t, PcmCloser> pcm_;
  std::uint64_t sequence_ = 0;
  std::atomic<std::uint64_t> blocks_{0};
  std::atomic<std::uint64_t> overruns_{0};
  std::atomic<std::uint64_t> errors_{0};
};

/// How long ReconnectingAudioSource waits between attempts to reopen a lost device.
struct AudioReconnectPolicy {
  std::chrono::milliseconds firstDelay{100};
  std::chrono::milliseconds maxDelay{2'000};
};

/// A source that outlives its device being unplugged: when the session throws kUnavailable or
/// kNotFound, it is dropped (counters kept) and reopened with doubling back-off; next() returns
/// nullopt meanwhile, so the caller (and the picture beside it) keeps running.
/// Thread-safety: thread-bound, except info() and counters() (thread-safe).
class ReconnectingAudioSource final : public AudioSource {
 public:
  using Opener = std::function<std::unique_ptr<AudioSource>()>;
  /// Opens the first session now; throws like `open` if it cannot.
  ReconnectingAudioSource(std::string name, Opener open, AudioReconnectPolicy policy = {});
  AudioSourceInfo info() const override;
  std::optional<AudioFrame> next(std::chrono::milliseconds timeout) override;
  AudioSourceCounters counters() const override;

 private:
  bool tryReopen();

  std::string name_;
  Opener open_;
  AudioReconnectPolicy policy_;
  std::chrono::milliseconds delay_;
  std::chrono::steady_clock::time_point nextAttempt_{};
  mutable std::mutex mutex_;  // guards session_ swaps against counters()/info(), and past_, info_
  std::unique_ptr<AudioSource> session_;
  AudioSourceCounters past_;
  AudioSourceInfo info_;
};

/// The PCM that converts and resamples for `device`: "plughw:C,D" for "hw:C,D", "plug:NAME" for a plain
/// name an asoundrc defines; empty where alsa-lib converts already or the name takes arguments.
std::string convertingDevice(const std::string& device);

/// `alsa:DEVICE` as a reconnecting source. A device that refuses 48 kHz S16 (or the channel count) is
/// opened through convertingDevice() instead, where alsa-lib resamples, with a log line saying so.
std::unique_ptr<AudioSource> openAlsaSource(const AlsaSettings& settings, AudioReconnectPolicy policy = {});

}  // namespace zerohop::audio
