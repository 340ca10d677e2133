#pragma once
// The A/V sync marker in the picture: a block in the bottom-right corner of the test camera's frames,
// white (luma 235) in the frame whose exposure holds a marker instant (av_marker.hpp), black (luma 16)
// in every other frame, neutral chroma throughout. A quarter of the width by a quarter of the height,
// on 16-pixel (macroblock) edges, so it survives H.264/VP8 at low bitrate; a receiver reads the mean
// luma of the block's middle half. Clear of the timecode strip at the top-left (timecode.hpp).
// Thread-safety: pure functions, reentrant.

#include <cstdint>
#include <optional>

#include "zerohop/frame.hpp"

namespace zerohop {

struct AvMarkerRect {
  std::uint32_t x = 0, y = 0, width = 0, height = 0;
};

/// Where the marker block sits in a `width` x `height` picture (all zero when the picture is smaller
/// than 64x64).
AvMarkerRect avMarkerRect(std::uint32_t width, std::uint32_t height) noexcept;

/// Paints the block into a host-memory YUYV, UYVY, NV12 or I420 frame: white when `shown`, else black.
/// Returns false (and paints nothing) for other formats, device memory, or a picture too small.
bool drawAvMarker(Frame& frame, bool shown) noexcept;

/// The mean luma of the block's middle half in a host-memory YUYV, UYVY, NV12 or I420 frame (nullopt
/// for other formats or a picture too small). Above kAvMarkerLumaThreshold: the marker is shown.
std::optional<double> avMarkerLuma(const Frame& frame) noexcept;
inline constexpr double kAvMarkerLumaThreshold = (16.0 + 235.0) / 2;

/// True or false when avMarkerLuma() can read the block, nullopt otherwise.
inline std::optional<bool> readAvMarker(const Frame& frame) noexcept {
  const auto luma = avMarkerLuma(frame);
  if (!luma) return std::nullopt;
  return *luma > kAvMarkerLumaThreshold;
}

}  // namespace zerohop
