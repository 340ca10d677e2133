#include "audio/opus_packet.hpp"

#include <opus/opus.h>

namespace zerohop::audio {

std::uint32_t opusPacketFrames(const std::uint8_t* packet, std::size_t bytes) noexcept {
  if (!packet || bytes == 0 || bytes > 0x7fffffff) return 0;
  // libopus reads the TOC (and a code 3 packet's frame count); it refuses packets over 120 ms.
  const int frames = opus_packet_get_nb_samples(packet, static_cast<opus_int32>(bytes), 48'000);
  return frames > 0 ? static_cast<std::uint32_t>(frames) : 0;
}

}  // namespace zerohop::audio
