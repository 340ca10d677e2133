#include "audio/alsa_source.hpp"

#include <alsa/asoundlib.h>

#include <algorithm>
#include <cerrno>
#include <thread>

#include "zerohop/clock.hpp"
#include "zerohop/error.hpp"
#include "zerohop/log.hpp"

namespace zerohop::audio {
namespace {

std::string alsaName(const AlsaSettings& s) {
  return "alsa:" + s.device;
}

// What to do about a device that refuses our format: hw: devices get their plughw: twin.
std::string formatFix(const std::string& device) {
  if (device.rfind("hw:", 0) == 0)
    return "open plug" + device + " instead (alsa-lib converts and resamples there)";
  return "open it through a plug PCM (plughw:CARD,DEV, or type plug in an asoundrc) so alsa-lib converts";
}

// Errc for a failed open, and the words that tell the user what to do.
Error openError(const std::string& device, int err) {
  std::string msg = "snd_pcm_open(" + device + ", capture) failed: " + snd_strerror(err) + " (errno " +
                    std::to_string(-err) + "); ";
  switch (-err) {
    case ENOENT:
    case ENXIO:
    case ENODEV:
      msg +=
          "no such capture device: `zerohop probe` lists the capture devices (hw:CARD,DEV), "
          "`arecord -L` every PCM name alsa-lib knows";
      return Error(Errc::kNotFound, std::move(msg));
    case EBUSY:
      msg +=
          "the device is in use by another program (`fuser -v /dev/snd/*` names it); stop it, or "
          "open a sharing PCM (dsnoop, or `default` through PulseAudio/PipeWire)";
      return Error(Errc::kUnavailable, std::move(msg));
    case EACCES:
    case EPERM:
      msg += "no permission for /dev/snd: add the user to the 'audio' group";
      return Error(Errc::kUnavailable, std::move(msg));
    default:
      return Error(errcFromErrno(-err), std::move(msg));
  }
}

void configure(snd_pcm_t* pcm, const AlsaSettings& s) {
  snd_pcm_hw_params_t* hw = nullptr;
  snd_pcm_hw_params_alloca(&hw);
  const std::string dev = alsaName(s);
  auto refused = [&](const std::string& what, int err) -> Error {
    return Error(Errc::kUnsupported, dev + ": the device refuses " + what + " (" + snd_strerror(err) + "); " +
                                         formatFix(s.device));
  };
  int rc = snd_pcm_hw_params_any(pcm, hw);
  if (rc < 0) throw Error(Errc::kDevice, dev + ": snd_pcm_hw_params_any failed: " + snd_strerror(rc));
  if ((rc = snd_pcm_hw_params_set_access(pcm, hw, SND_PCM_ACCESS_RW_INTERLEAVED)) < 0)
    throw refused("interleaved read access", rc);
  if ((rc = snd_pcm_hw_params_set_format(pcm, hw, SND_PCM_FORMAT_S16_LE)) < 0)
    throw refused("signed 16-bit samples (S16_LE)", rc);
  if ((rc = snd_pcm_hw_params_set_channels(pcm, hw, s.channels)) < 0) {
    unsigned lo = 0, hi = 0;
    snd_pcm_hw_params_get_channels_min(hw, &lo);
    snd_pcm_hw_params_get_channels_max(hw, &hi);
    throw Error(Errc::kUnsupported, dev + ": the device refuses " + std::to_string(s.channels) +
                                        " channels (it offers " + std::to_string(lo) + ".." +
                                        std::to_string(hi) + "); ask for a count in that range, or " +
                                        formatFix(s.device));
  }
  if ((rc = snd_pcm_hw_params_set_rate(pcm, hw, kSampleRate, 0)) < 0) {
    unsigned lo = 0, hi = 0;
    snd_pcm_hw_params_get_rate_min(hw, &lo, nullptr);
    snd_pcm_hw_params_get_rate_max(hw, &hi, nullptr);
    throw Error(Errc::kUnsupported, dev + ": the device refuses 48000 Hz (it offers " + std::to_string(lo) +
                                        ".." + std::to_string(hi) + " Hz); " + formatFix(s.device));
  }
  snd_pcm_uframes_t period = s.periodFrames;
  if ((rc = snd_pcm_hw_params_set_period_size_near(pcm, hw, &period, nullptr)) < 0)
    throw refused("a period of " + std::to_string(s.periodFrames) + " frames", rc);
  snd_pcm_uframes_t buffer = period * std::max<std::uint32_t>(s.periods, 2);
  if ((rc = snd_pcm_hw_params_set_buffer_size_near(pcm, hw, &buffer)) < 0)
    throw refused("a buffer of " + std::to_string(buffer) + " frames", rc);
  if ((rc = snd_pcm_hw_params(pcm, hw)) < 0) throw refused("48 kHz S16 capture", rc);
  if (period != s.periodFrames) {
    log::debug(dev, ": period ", period, " frames (asked ", s.periodFrames, "); blocks stay ",
               s.periodFrames);
  }
}

}  // namespace

void AlsaSource::PcmCloser::operator()(snd_pcm_t* p) const noexcept {
  if (p == nullptr) return;
  snd_pcm_drop(p);
  if (const int rc = snd_pcm_close(p); rc < 0) log::warn("snd_pcm_close failed: ", snd_strerror(rc));
}

AlsaSource::AlsaSource(const AlsaSettings& settings) : settings_(settings) {
  if (settings_.channels == 0 || settings_.channels > 8) {
    throw Error(Errc::kInvalidArgument, alsaName(settings_) + ": " + std::to_string(settings_.channels) +
                                            " channels asked for; give 1 to 8");
  }
  if (settings_.periodFrames == 0) settings_.periodFrames = 480;
  snd_pcm_t* raw = nullptr;
  // Non-blocking: a busy device answers EBUSY at once instead of blocking the caller.
  const int rc = snd_pcm_open(&raw, settings_.device.c_str(), SND_PCM_STREAM_CAPTURE, SND_PCM_NONBLOCK);
  if (rc < 0) throw openError(settings_.device, rc);
  pcm_.reset(raw);
  configure(pcm_.get(), settings_);
  if (const int p = snd_pcm_prepare(pcm_.get()); p < 0) fail("snd_pcm_prepare", p);
  if (const int s = snd_pcm_start(pcm_.get()); s < 0) fail("snd_pcm_start", s);
  log::info(alsaName(settings_), ": capturing 48000 Hz S16, ", settings_.channels, " channel(s), ",
            settings_.periodFrames, "-frame blocks");
}

AlsaSource::~AlsaSource() = default;

AudioSourceInfo AlsaSource::info() const {
  return {alsaName(settings_), settings_.channels, settings_.periodFrames};
}

AudioSourceCounters AlsaSource::counters() const {
  AudioSourceCounters c;
  c.blocks = blocks_.load(std::memory_order_relaxed);
  c.overruns = overruns_.load(std::memory_order_relaxed);
  c.errors = errors_.load(std::memory_order_relaxed);
  return c;
}

void AlsaSource::fail(const char* call, int err) const {
  if (err == -ENODEV || err == -ENOENT || err == -EBADFD) {
    throw Error(Errc::kUnavailable, alsaName(settings_) + ": " + call + " failed: " + snd_strerror(err) +
                                        "; the device is gone (unplugged?)");
  }
  throw Error(errcFromErrno(-err), alsaName(settings_) + ": " + call + " failed: " + snd_strerror(err) +
                                       " (errno " + std::to_string(-err) + ")");
}

void AlsaSource::recover(int err) {
  if (err == -EAGAIN) return;
  // An unplugged card's stream reads DISCONNECTED whatever error the call that noticed it gave.
  if (snd_pcm_state(pcm_.get()) == SND_PCM_STATE_DISCONNECTED) fail("snd_pcm_state", -ENODEV);
  if (err == -EPIPE) {
    const std::uint64_t n = overruns_.fetch_add(1, std::memory_order_relaxed) + 1;
    if (n == 1 || n % 100 == 0) {
      log::warn(alsaName(settings_), ": capture overrun (samples lost: the reader fell more than ",
                settings_.periods * 10, " ms behind), ", n, " so far; restarting the stream");
    }
  } else if (err == -ESTRPIPE) {
    errors_.fetch_add(1, std::memory_order_relaxed);
    log::warn(alsaName(settings_), ": capture suspended (system sleep); resuming");
    if (snd_pcm_resume(pcm_.get()) == 0) return;
  } else {
    fail("snd_pcm_readi", err);
  }
  if (const int rc = snd_pcm_prepare(pcm_.get()); rc < 0) fail("snd_pcm_prepare", rc);
  if (const int rc = snd_pcm_start(pcm_.get()); rc < 0) fail("snd_pcm_start", rc);
}

std::optional<AudioFrame> AlsaSource::next(std::chrono::milliseconds timeout) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  snd_pcm_t* pcm = pcm_.get();
  AudioFrame f;
  f.channels = settings_.channels;
  f.samples.resize(static_cast<std::size_t>(settings_.periodFrames) * settings_.channels);
  const auto period = static_cast<snd_pcm_sframes_t>(settings_.periodFrames);
  for (;;) {
    if (snd_pcm_state(pcm) == SND_PCM_STATE_DISCONNECTED) fail("snd_pcm_state", -ENODEV);
    const snd_pcm_sframes_t avail = snd_pcm_avail_update(pcm);
    if (avail < 0) {
      recover(static_cast<int>(avail));
      continue;
    }
    if (avail >= period) {  // a whole block is there: read it without blocking
      const snd_pcm_sframes_t n =
          snd_pcm_readi(pcm, f.samples.data(), static_cast<snd_pcm_uframes_t>(period));
      if (n == period) break;
      if (n < 0) {
        recover(static_cast<int>(n));
      } else {
        errors_.fetch_add(1, std::memory_order_relaxed);  // a short read: those samples are dropped
      }
      continue;
    }
    const auto left =
        std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) return std::nullopt;
    const int w = snd_pcm_wait(pcm, static_cast<int>(left.count()));
    if (w < 0) recover(w);
  }
  const std::int64_t now = monotonicNs();
  snd_pcm_sframes_t delay = 0;
  if (snd_pcm_delay(pcm, &delay) < 0 || delay < 0) delay = 0;
  // The last sample read was captured `delay` frames ago; the block's first one periodFrames before that.
  delay = std::min<snd_pcm_sframes_t>(delay, static_cast<snd_pcm_sframes_t>(settings_.periodFrames) *
                                                 std::max<std::uint32_t>(settings_.periods, 2));
  f.captureNs = now - framesToNs(delay + settings_.periodFrames);
  f.sequence = sequence_++;
  blocks_.fetch_add(1, std::memory_order_relaxed);
  return f;
}

// --- ReconnectingAudioSource ---

namespace {
bool deviceGone(const Error& e) {
  return e.code() == Errc::kNotFound || e.code() == Errc::kUnavailable;
}
}  // namespace

ReconnectingAudioSource::ReconnectingAudioSource(std::string name, Opener open, AudioReconnectPolicy policy)
    : name_(std::move(name)), open_(std::move(open)), policy_(policy), delay_(policy.firstDelay) {
  session_ = open_();
  info_ = session_->info();
}

AudioSourceInfo ReconnectingAudioSource::info() const {
  std::lock_guard lock(mutex_);
  return info_;
}

AudioSourceCounters ReconnectingAudioSource::counters() const {
  std::lock_guard lock(mutex_);
  AudioSourceCounters c = past_;
  if (session_) {
    const AudioSourceCounters now = session_->counters();
    c.blocks += now.blocks;
    c.overruns += now.overruns;
    c.errors += now.errors;
  }
  return c;
}

bool ReconnectingAudioSource::tryReopen() {
  if (std::chrono::steady_clock::now() < nextAttempt_) return false;
  try {
    auto fresh = open_();
    log::info(name_, ": the audio device is back, capture resumed");
    std::lock_guard lock(mutex_);
    info_ = fresh->info();
    session_ = std::move(fresh);
    ++past_.reopens;
    delay_ = policy_.firstDelay;
    return true;
  } catch (const Error& e) {
    if (!deviceGone(e)) throw;
    log::debug(name_, ": still gone (", e.what(), "), next try in ", delay_.count(), " ms");
    nextAttempt_ = std::chrono::steady_clock::now() + delay_;
    delay_ = std::min(delay_ * 2, policy_.maxDelay);
    return false;
  }
}

std::optional<AudioFrame> ReconnectingAudioSource::next(std::chrono::milliseconds timeout) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  for (;;) {
    if (!session_ && !tryReopen()) {
      std::this_thread::sleep_until(std::min(deadline, nextAttempt_));
      if (std::chrono::steady_clock::now() >= deadline) return std::nullopt;
      continue;
    }
    const auto left =
        std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
    try {
      return session_->next(std::max(left, std::chrono::milliseconds(0)));
    } catch (const Error& e) {
      if (!deviceGone(e)) throw;
      log::warn(name_, ": audio device lost (", e.what(),
                "); the picture goes on, reopening with back-off up to ", policy_.maxDelay.count(), " ms");
      std::unique_ptr<AudioSource> old;
      {
        std::lock_guard lock(mutex_);
        const AudioSourceCounters c = session_->counters();
        past_.blocks += c.blocks;
        past_.overruns += c.overruns;
        past_.errors += c.errors + 1;  // the outage itself
        old = std::move(session_);
      }
      old.reset();
      delay_ = policy_.firstDelay;
      nextAttempt_ = std::chrono::steady_clock::now() + delay_;
    }
  }
}

std::string convertingDevice(const std::string& device) {
  if (device.rfind("hw:", 0) == 0) return "plug" + device;
  if (device.empty() || device == "default" || device.find(':') != std::string::npos) return {};
  return "plug:" + device;  // alsa.conf's plug PCM over a name an asoundrc defines
}

std::unique_ptr<AudioSource> openAlsaSource(const AlsaSettings& settings, AudioReconnectPolicy policy) {
  auto open = [settings]() -> std::unique_ptr<AudioSource> {
    try {
      return std::make_unique<AlsaSource>(settings);
    } catch (const Error& e) {
      const std::string plug = convertingDevice(settings.device);
      if (e.code() != Errc::kUnsupported || plug.empty()) throw;
      log::info(e.what(), "; opening alsa:", plug, " instead");
      AlsaSettings converting = settings;
      converting.device = plug;
      return std::make_unique<AlsaSource>(converting);
    }
  };
  return std::make_unique<ReconnectingAudioSource>("alsa:" + settings.device, std::move(open), policy);
}

}  // namespace zerohop::audio
