#pragma once
// What an Opus packet says of itself (its TOC byte, RFC 6716 §3.1), read by libopus.
// Thread-safety: pure functions.

#include <cstddef>
#include <cstdint>

namespace zerohop::audio {

/// The sample frames (48 kHz) the packet decodes to: 480 for 10 ms, 960 for 20 ms; 0 when it is not an
/// Opus packet (empty, a malformed TOC, longer than 120 ms).
std::uint32_t opusPacketFrames(const std::uint8_t* packet, std::size_t bytes) noexcept;

}  // namespace zerohop::audio
