#include "audio/tone_source.hpp"

#include <cmath>
#include <numbers>
#include <thread>

#include "core/av_marker.hpp"
#include "zerohop/clock.hpp"
#include "zerohop/error.hpp"

namespace zerohop::audio {
namespace {

std::int64_t sampleTimeNs(std::int64_t originNs, std::uint64_t index) {
  // Exact for any index: whole seconds, then the remainder in nanoseconds.
  const auto secs = static_cast<std::int64_t>(index / kSampleRate);
  const auto rest = static_cast<std::int64_t>(index % kSampleRate);
  return originNs + secs * 1'000'000'000 + framesToNs(rest);
}

}  // namespace

bool inClick(std::int64_t sampleNs, const ToneSettings& s) noexcept {
  return sampleNs - avMarkerAtOrBefore(sampleNs) < s.clickNs;
}

void renderTone(std::span<std::int16_t> out, std::int64_t originNs, std::uint64_t firstIndex,
                const ToneSettings& s) noexcept {
  const std::uint32_t channels = s.channels == 0 ? 1 : s.channels;
  const std::size_t frames = out.size() / channels;
  const double step = 2.0 * std::numbers::pi * s.frequencyHz / kSampleRate;
  for (std::size_t i = 0; i < frames; ++i) {
    const std::uint64_t index = firstIndex + i;
    const std::int64_t t = sampleTimeNs(originNs, index);
    std::int16_t v = 0;
    if (inClick(t, s)) {
      // A 4 kHz full-scale square wave: unmistakable next to the sine, found by its energy.
      v = ((t - avMarkerAtOrBefore(t)) / 125'000) % 2 == 0 ? std::int16_t{32'000} : std::int16_t{-32'000};
    } else {
      // The phase is taken modulo one second of samples so it stays exact over hours of tone.
      const double phase = step * static_cast<double>(index % kSampleRate);
      v = static_cast<std::int16_t>(std::lround(s.amplitude * 32'767.0 * std::sin(phase)));
    }
    for (std::uint32_t c = 0; c < channels; ++c) out[i * channels + c] = v;
  }
}

ToneSource::ToneSource(ToneSettings settings) : settings_(settings) {
  if (settings_.channels == 0 || settings_.channels > 8) {
    throw Error(Errc::kInvalidArgument,
                "test tone: " + std::to_string(settings_.channels) + " channels asked for; give 1 to 8");
  }
  if (settings_.periodFrames == 0) settings_.periodFrames = 480;
}

AudioSourceInfo ToneSource::info() const {
  return {"test", settings_.channels, settings_.periodFrames};
}

AudioSourceCounters ToneSource::counters() const {
  AudioSourceCounters c;
  c.blocks = blocks_.load(std::memory_order_relaxed);
  return c;
}

std::optional<AudioFrame> ToneSource::next(std::chrono::milliseconds timeout) {
  const std::int64_t now = monotonicNs();
  if (originNs_ == 0) {
    // The first block ends now: it is due at once, and later blocks follow in real time.
    originNs_ = now - framesToNs(settings_.periodFrames);
  }
  const std::int64_t dueNs = sampleTimeNs(originNs_, nextIndex_ + settings_.periodFrames);
  if (dueNs > now) {
    if (dueNs - now > std::chrono::nanoseconds(timeout).count()) {
      std::this_thread::sleep_for(timeout);
      return std::nullopt;
    }
    std::this_thread::sleep_for(std::chrono::nanoseconds(dueNs - now));
  }
  AudioFrame f;
  f.channels = settings_.channels;
  f.samples.resize(static_cast<std::size_t>(settings_.periodFrames) * settings_.channels);
  f.captureNs = sampleTimeNs(originNs_, nextIndex_);
  f.sequence = sequence_++;
  renderTone(f.samples, originNs_, nextIndex_, settings_);
  nextIndex_ += settings_.periodFrames;
  blocks_.fetch_add(1, std::memory_order_relaxed);
  return f;
}

}  // namespace zerohop::audio
