#pragma once
// A machine-readable timecode drawn into the pixels of every test-camera (and emulated-camera)
// frame, so a receiver can measure capture->display latency from the decoded picture alone.
//
// Geometry (the browser's viewer.js implements the same reader):
//   cell = max(4, width / 80) pixels square, a strip of 76 cells at the top-left (x = 0, y = 0).
//   cells 0..3   sync pattern 1 0 1 0
//   cells 4..47  44 bits: CLOCK_REALTIME milliseconds at capture, modulo 2^44, most significant first
//   cells 48..67 20 bits: frame sequence modulo 2^20
//   cells 68..75 8 bits: CRC-8 (poly 0x07, init 0) over the 64 payload bits as 8 bytes, big-endian
// A 1 bit is luma 235 (white), a 0 bit luma 16 (black); chroma under the strip is neutral.
// Thread-safety: pure functions, reentrant.

#include <cstdint>
#include <optional>

#include "zerohop/export.h"
#include "zerohop/frame.hpp"

namespace zerohop {

struct Timecode {
  std::uint64_t wallClockMs = 0;  ///< modulo 2^44 once read back
  std::uint32_t sequence = 0;     ///< modulo 2^20 once read back
  bool operator==(const Timecode&) const = default;
};

inline constexpr std::uint32_t kTimecodeCells = 76;
inline constexpr std::uint64_t kTimecodeMsMask = (std::uint64_t{1} << 44) - 1;
inline constexpr std::uint32_t kTimecodeSeqMask = (1u << 20) - 1;

/// Cell edge in pixels for an image `width` pixels wide.
ZEROHOP_API std::uint32_t timecodeCellSize(std::uint32_t width) noexcept;
/// The smallest image width that can hold the strip.
inline constexpr std::uint32_t kTimecodeMinWidth = kTimecodeCells * 4;

ZEROHOP_API std::uint8_t crc8(const std::uint8_t* data, std::size_t size) noexcept;

/// Draws `tc` into a host-memory frame of format YUYV, UYVY, NV12, I420 (other formats: no-op,
/// returns false). Returns false if the frame is too small to hold the strip.
ZEROHOP_API bool drawTimecode(Frame& frame, const Timecode& tc) noexcept;

/// Reads the timecode back from a host-memory YUYV/UYVY/NV12/I420 frame. nullopt if the sync
/// pattern or CRC does not match.
ZEROHOP_API std::optional<Timecode> readTimecode(const Frame& frame) noexcept;

}  // namespace zerohop
