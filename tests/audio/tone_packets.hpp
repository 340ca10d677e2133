#pragma once
// Test support: the test tone (440 Hz, a quarter of full scale, no clicks) through the Opus encode serve
// runs (OpusAudioEncoder, its default settings: 64 kb/s, 20 ms packets: serve's --audio-frame-ms 20), as the
// packets a sound share carries, the first sample at capture instant 0. In stereo the tone is on the left and
// the right is silent (a signal Opus cannot code as mono). Used by the decoder's tests in C++, C and Python.

#include <cstddef>
#include <cstdint>
#include <vector>

#include "audio/opus_encoder.hpp"
#include "audio/tone_source.hpp"

namespace zerohop::audio {

/// `packets` packets of 20 ms (fed in 10 ms blocks, as serve feeds the encoder).
inline std::vector<OpusPacket> tonePackets(std::uint32_t channels, std::size_t packets) {
  ToneSettings tone;
  tone.clickNs = 0;
  OpusSettings settings;
  settings.channels = channels;
  OpusAudioEncoder encoder(settings);
  std::vector<OpusPacket> out;
  std::vector<std::int16_t> mono(480);
  for (std::uint64_t i = 0; out.size() < packets; ++i) {
    AudioFrame block;
    block.channels = channels;
    block.captureNs = static_cast<std::int64_t>(i) * 10'000'000;
    block.sequence = i;
    renderTone(mono, 0, i * 480, tone);
    block.samples.assign(480 * channels, 0);
    for (std::size_t k = 0; k < 480; ++k) block.samples[k * channels] = mono[k];
    for (OpusPacket& p : encoder.encode(block)) out.push_back(std::move(p));
  }
  out.resize(packets);
  return out;
}

}  // namespace zerohop::audio
