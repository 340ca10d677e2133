#pragma once
// Checks a converter makes on the frames it is handed before any library touches their memory.
// Thread-safety: pure functions, reentrant.

#include "zerohop/frame.hpp"

namespace zerohop::convert {

/// Throws Error(kUnsupported) unless `frame` is in host or pinned memory (the CPU can read it).
void requireHostMemory(const Frame& frame, const char* role);

/// Throws Error(kInvalidArgument) unless every plane of an uncompressed `frame` has a pointer and a
/// pitch at least as wide as one row of pixels.
void requireRawPlanes(const Frame& frame, const char* role);

/// Throws Error(kInvalidArgument) unless a compressed `frame` has a payload within its capacity.
void requirePayload(const Frame& frame, const char* role);

/// Bytes of one row of plane `plane` of `format` at `width` pixels.
std::uint32_t rowBytes(PixelFormat format, std::uint32_t plane, std::uint32_t width) noexcept;

}  // namespace zerohop::convert
