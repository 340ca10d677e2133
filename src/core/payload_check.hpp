#pragma once
// The cheap sanity checks every compressed frame passes before any decoder sees it: cameras deliver
// empty, truncated and garbled frames (USB errors, bandwidth), and a decoder fed one either fails
// late or shows garbage. Pure logic on a host buffer, in the core so that capture and the GPU
// decoder both check without depending on each other.
// Thread-safety: reentrant.

#include <cstddef>
#include <cstdint>

namespace zerohop::core_detail {

/// nullptr when `data[0..size)` looks like a whole JPEG (SOI at the start, EOI at the end, allowing
/// zero padding after it); otherwise why not ("empty", "no SOI marker", "no EOI marker (truncated?)").
const char* mjpegDefect(const std::uint8_t* data, std::size_t size) noexcept;

/// nullptr when `data[0..size)` starts like an H.264 Annex B access unit (a 00 00 01 or
/// 00 00 00 01 start code then a NAL header with the forbidden bit clear); otherwise why not.
const char* annexBDefect(const std::uint8_t* data, std::size_t size) noexcept;

}  // namespace zerohop::core_detail
