#pragma once
// Pixel formats, colour description and the memory layout of one image.
// Thread-safety: pure functions and value types, reentrant.

#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string_view>

#include "zerohop/export.h"

namespace zerohop {

enum class PixelFormat : std::uint8_t {
  kUnknown = 0,
  kYUYV,   ///< packed 4:2:2, Y0 U Y1 V (V4L2 YUYV, FFmpeg yuyv422)
  kUYVY,   ///< packed 4:2:2, U Y0 V Y1
  kNV12,   ///< planar Y + interleaved UV 4:2:0
  kI420,   ///< planar Y, U, V 4:2:0
  kRGB24,  ///< packed R G B, 8 bits each
  kBGRx,   ///< packed B G R x (x ignored), 32 bits
  kRGBA,   ///< packed R G B A, 32 bits
  kMJPEG,  ///< one JPEG image per frame (compressed, variable size)
  kH264,   ///< one H.264 Annex B access unit per frame (compressed, variable size)
  // 10 was kVP8, a codec and no format (zerohop/codec.hpp): the numbers after it are kept.
  kOpus = 11,  ///< sound, not a picture: one Opus packet (RFC 6716, 48 kHz) per slot of a NAME.opus share
};

enum class ColorMatrix : std::uint8_t { kBt601, kBt709 };
enum class ColorRange : std::uint8_t { kLimited, kFull };

struct ColorDesc {
  ColorMatrix matrix = ColorMatrix::kBt601;
  ColorRange range = ColorRange::kLimited;
  bool operator==(const ColorDesc&) const = default;
};

inline constexpr std::size_t kMaxPlanes = 3;

/// Layout of one plane inside a contiguous buffer.
struct PlaneLayout {
  std::uint32_t offset = 0;  ///< bytes from the start of the buffer
  std::uint32_t pitch = 0;   ///< bytes per row
  std::uint32_t rows = 0;    ///< number of rows
  std::uint32_t widthBytes = 0;  ///< meaningful bytes per row (pitch >= widthBytes)
};

/// Layout of a whole image in one contiguous buffer. For compressed formats `planeCount` is 1 and
/// `totalBytes` is the capacity needed for the worst-case frame.
struct ImageLayout {
  PixelFormat format = PixelFormat::kUnknown;
  std::uint32_t width = 0;
  std::uint32_t height = 0;
  std::uint32_t planeCount = 0;
  std::array<PlaneLayout, kMaxPlanes> planes{};
  std::size_t totalBytes = 0;
};

ZEROHOP_API std::string_view formatName(PixelFormat format) noexcept;
/// Parses "yuyv", "nv12", "mjpeg", "h264"... (case-insensitive); nullopt if unknown.
ZEROHOP_API std::optional<PixelFormat> parseFormat(std::string_view name) noexcept;
/// V4L2 / FourCC code ('YUYV', 'NV12', 'YU12', 'RGB3', 'XR24'/'BX24', 'AB24', 'MJPG', 'H264').
ZEROHOP_API std::uint32_t formatFourcc(PixelFormat format) noexcept;
ZEROHOP_API std::optional<PixelFormat> formatFromFourcc(std::uint32_t fourcc) noexcept;
ZEROHOP_API bool isCompressed(PixelFormat format) noexcept;
ZEROHOP_API std::uint32_t planeCount(PixelFormat format) noexcept;

/// Computes the layout of `format` at width x height with each row padded to `pitchAlign` bytes
/// (a power of two). Throws Error(kInvalidArgument) for zero or odd sizes a format cannot hold
/// (4:2:0 and 4:2:2 formats need an even width; 4:2:0 an even height).
ZEROHOP_API ImageLayout computeLayout(PixelFormat format, std::uint32_t width, std::uint32_t height,
                          std::uint32_t pitchAlign = 1);

}  // namespace zerohop
