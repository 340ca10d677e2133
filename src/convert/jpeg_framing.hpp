#pragma once
// Cheap structural checks on one JPEG (MJPEG frame) before a decoder sees it: start-of-image
// marker first, end-of-image marker last (after any zero padding a UVC camera appends).
// Thread-safety: pure functions, reentrant.

#include <cstddef>
#include <cstdint>
#include <string>

namespace zerohop::convert {

/// Empty if `data` looks like one whole JPEG; otherwise why not ("no SOI marker", "truncated: no EOI
/// marker").
std::string jpegFramingProblem(const std::uint8_t* data, std::size_t size);

/// Size of the JPEG without trailing zero padding (the EOI marker is the last thing kept).
std::size_t jpegTrimmedSize(const std::uint8_t* data, std::size_t size) noexcept;

}  // namespace zerohop::convert
