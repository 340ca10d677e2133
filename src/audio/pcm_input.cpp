#include "audio/pcm_input.hpp"

#include <utility>

#include "zerohop/clock.hpp"
#include "zerohop/error.hpp"

namespace zerohop::audio {

PcmInput::PcmInput(std::uint32_t channels, std::string name) : channels_(channels), name_(std::move(name)) {
  if (channels != 1 && channels != 2)
    throw Error(Errc::kInvalidArgument,
                "sound of " + std::to_string(channels) + " channels: give 1 (mono) or 2 (stereo, interleaved)");
}

void PcmInput::push(const std::int16_t* samples, std::size_t frames, std::int64_t captureNs) {
  if (!samples || frames == 0) throw Error(Errc::kInvalidArgument, "pushAudio: no samples (null, or 0 frames)");
  if (frames > kMaxFrames)
    throw Error(Errc::kInvalidArgument, "pushAudio: " + std::to_string(frames) +
                                            " sample frames in one block; at most " + std::to_string(kMaxFrames) +
                                            " (one second at 48 kHz): push smaller blocks");
  if (captureNs < 0) throw Error(Errc::kInvalidArgument, "pushAudio: a negative capture instant");
  AudioFrame block;
  block.channels = channels_;
  block.samples.assign(samples, samples + frames * channels_);
  block.captureNs = captureNs == 0 ? monotonicNs() : captureNs;
  block.sequence = sequence_.fetch_add(1);
  queue_.push(std::move(block));
}

AudioSourceInfo PcmInput::info() const {
  AudioSourceInfo i;
  i.name = name_;
  i.channels = channels_;
  i.periodFrames = 0;  // whatever the program pushes
  return i;
}

std::optional<AudioFrame> PcmInput::next(std::chrono::milliseconds timeout) {
  auto block = queue_.pop(timeout);
  if (block) blocks_.fetch_add(1, std::memory_order_relaxed);
  return block;
}

AudioSourceCounters PcmInput::counters() const {
  AudioSourceCounters c;
  c.blocks = blocks_.load(std::memory_order_relaxed);
  c.overruns = queue_.dropped();  // blocks pushed faster than the encoder took them, dropped oldest first
  return c;
}

}  // namespace zerohop::audio
