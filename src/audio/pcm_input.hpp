#pragma once
// A program's own sound as an AudioSource (FrameStream::pushAudio, zh_stream_push_audio): the program
// pushes blocks of interleaved signed 16-bit PCM at 48 kHz, each stamped with the CLOCK_MONOTONIC
// instant of its first sample (the clock its frames' captureNs use, so picture and sound line up), and
// the AudioTrack's capture thread takes them with next(). Blocks wait in a bounded queue that drops the
// oldest (kQueueBlocks), so push() never waits; a dropped block is counted as an overrun.
// Thread-safety: push() from any thread (concurrent pushes are serialised, in the order they lock);
// next() is thread-bound (the capture thread); info() and counters() from any.

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <string>

#include "audio/audio_source.hpp"

namespace zerohop::audio {

class PcmInput final : public AudioSource {
 public:
  /// Blocks that may wait for the encoder: a second of 10 ms blocks.
  static constexpr std::size_t kQueueBlocks = 100;
  /// Sample frames one push() may carry: one second.
  static constexpr std::size_t kMaxFrames = kSampleRate;

  /// `channels`: 1 or 2. Throws Error(kInvalidArgument) otherwise.
  PcmInput(std::uint32_t channels, std::string name);

  /// One block: `frames` sample frames of `channels` values each. `captureNs` is the CLOCK_MONOTONIC
  /// instant of its first sample; 0: now (the block is taken as just captured). Throws
  /// Error(kInvalidArgument) for null samples, no frames, more than kMaxFrames, or a negative instant.
  void push(const std::int16_t* samples, std::size_t frames, std::int64_t captureNs);

  AudioSourceInfo info() const override;
  std::optional<AudioFrame> next(std::chrono::milliseconds timeout) override;
  AudioSourceCounters counters() const override;

 private:
  const std::uint32_t channels_;
  const std::string name_;
  AudioQueue queue_{kQueueBlocks};
  std::atomic<std::uint64_t> sequence_{0};
  std::atomic<std::uint64_t> blocks_{0};
};

}  // namespace zerohop::audio
