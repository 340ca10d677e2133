#pragma once
// The built-in test tone: a sine at 48 kHz with a click at every A/V marker instant of the capture
// clock (core/av_marker.hpp), the instants the test camera draws its marker at, so the click against
// the marker measures audio/video sync at a receiver. Blocks are delivered in real time: a block is
// returned once its last sample's instant has passed, as a sound card would deliver it.
// Thread-safety: ToneSource is thread-bound, except info() and counters() (thread-safe);
// renderTone() is a pure function.

#include <atomic>
#include <cstdint>
#include <span>

#include "audio/audio_source.hpp"

namespace zerohop::audio {

struct ToneSettings {
  std::uint32_t channels = 1;
  double frequencyHz = 440.0;
  double amplitude = 0.25;           ///< of full scale, the sine
  std::int64_t clickNs = 2'000'000;  ///< how long each click lasts (full-scale square wave)
  std::uint32_t periodFrames = 480;  ///< sample frames a block: 10 ms
};

/// True when the sample at `sampleNs` lies inside a click.
bool inClick(std::int64_t sampleNs, const ToneSettings& s) noexcept;

/// Renders `out.size() / s.channels` sample frames whose first sample is sample number `firstIndex`
/// of a tone that started at `originNs` (sample k is at originNs + k / 48 kHz). Pure: the same
/// arguments give the same samples, and the click lands where avMarkerAtOrAfter() says.
void renderTone(std::span<std::int16_t> out, std::int64_t originNs, std::uint64_t firstIndex,
                const ToneSettings& s) noexcept;

class ToneSource final : public AudioSource {
 public:
  explicit ToneSource(ToneSettings settings = {});
  AudioSourceInfo info() const override;
  std::optional<AudioFrame> next(std::chrono::milliseconds timeout) override;
  AudioSourceCounters counters() const override;

 private:
  ToneSettings settings_;
  std::int64_t originNs_ = 0;
  std::uint64_t nextIndex_ = 0;  // sample frame index of the next block's first sample
  std::uint64_t sequence_ = 0;
  std::atomic<std::uint64_t> blocks_{0};
};

}  // namespace zerohop::audio
