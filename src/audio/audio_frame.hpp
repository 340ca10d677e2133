#pragma once
// A block of captured sound: interleaved signed 16-bit PCM at 48 kHz, stamped on the capture clock
// (CLOCK_MONOTONIC nanoseconds, zerohop/clock.hpp: the clock video frames carry) at its first sample.
// Or, from a source whose sound comes encoded in Opus (an RTSP camera's), one Opus packet as it came:
// AudioTrack passes it on as it is, neither decoded nor encoded again.
// Audio blocks travel between threads through AudioQueue: bounded, drop-oldest, as video frames do.
// Thread-safety: AudioFrame is a value type.

#include <cstddef>
#include <cstdint>
#include <vector>

#include "core/bounded_queue.hpp"

namespace zerohop::audio {

inline constexpr std::uint32_t kSampleRate = 48'000;

/// Nanoseconds that `frames` sample frames last at 48 kHz.
constexpr std::int64_t framesToNs(std::int64_t frames) noexcept {
  return frames * 1'000'000'000 / kSampleRate;
}

struct AudioFrame {
  std::vector<std::int16_t> samples;  ///< interleaved, channels() values a sample frame
  std::vector<std::uint8_t> opus;     ///< or (samples empty) one Opus packet as its source encoded it
  std::uint32_t opusFrames = 0;       ///< the sample frames that packet decodes to (480: 10 ms)
  std::uint32_t channels = 1;
  std::int64_t captureNs = 0;  ///< CLOCK_MONOTONIC instant of the first sample
  std::uint64_t sequence = 0;  ///< block counter of its source
  /// Sample frames (samples per channel) in this block.
  std::size_t frameCount() const noexcept {
    if (!opus.empty()) return opusFrames;
    return channels == 0 ? 0 : samples.size() / channels;
  }
  /// How long this block lasts.
  std::int64_t durationNs() const noexcept { return framesToNs(static_cast<std::int64_t>(frameCount())); }
};

/// Hand-off between the capture thread and the encoder: drop-oldest (live sound never blocks capture).
using AudioQueue = BoundedQueue<AudioFrame>;

}  // namespace zerohop::audio
