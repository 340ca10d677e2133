#pragma once
// Internal: what an Opus packet's TOC byte (RFC 6716, 3.1) says of the channels it codes. A sound
// share and an Opus track carry no channel count of their own, so the readers (the recorder, the WHEP
// answer's sprop-stereo, the GStreamer source's caps) take it from the packets.
// Thread-safety: pure function, reentrant.

#include <cstddef>
#include <cstdint>

namespace zerohop {

/// 2 when the packet's TOC byte has its stereo flag, 1 when not, 0 for an empty packet.
inline int opusPacketChannels(const std::uint8_t* packet, std::size_t bytes) noexcept {
  if (bytes == 0) return 0;
  return (packet[0] & 0x04) != 0 ? 2 : 1;
}

}  // namespace zerohop
