#include "core/av_marker_picture.hpp"

#include <algorithm>
#include <cstring>

namespace zerohop {
namespace {

constexpr std::uint8_t kWhite = 235;
constexpr std::uint8_t kBlack = 16;
constexpr std::uint32_t kMinSide = 64;

bool readable(const Frame& f) {
  if (f.memory == MemoryKind::kDevice || f.data[0] == nullptr) return false;
  switch (f.format) {
    case PixelFormat::kYUYV:
    case PixelFormat::kUYVY:
      return true;
    case PixelFormat::kNV12:
    case PixelFormat::kI420:
      return f.data[1] != nullptr && (f.format == PixelFormat::kNV12 || f.data[2] != nullptr);
    default:
      return false;
  }
}

// The luma byte of pixel (x, y).
const std::uint8_t* lumaAt(const Frame& f, std::uint32_t x, std::uint32_t y) {
  const std::uint8_t* row = f.data[0] + std::size_t{y} * f.pitch[0];
  switch (f.format) {
    case PixelFormat::kYUYV:
      return row + std::size_t{x} * 2;
    case PixelFormat::kUYVY:
      return row + std::size_t{x} * 2 + 1;
    default:
      return row + x;
  }
}

}  // namespace

AvMarkerRect avMarkerRect(std::uint32_t width, std::uint32_t height) noexcept {
  if (width < kMinSide || height < kMinSide) return {};
  AvMarkerRect r;
  r.width = std::max<std::uint32_t>(16, (width / 4) & ~15u);
  r.height = std::max<std::uint32_t>(16, (height / 4) & ~15u);
  r.x = (width - r.width) & ~15u;
  r.y = (height - r.height) & ~15u;
  return r;
}

bool drawAvMarker(Frame& frame, bool shown) noexcept {
  const AvMarkerRect r = avMarkerRect(frame.width, frame.height);
  if (!readable(frame) || r.width == 0) return false;
  const std::uint8_t luma = shown ? kWhite : kBlack;
  switch (frame.format) {
    case PixelFormat::kYUYV:
    case PixelFormat::kUYVY: {
      // A macropixel is Y Cb Y Cr (YUYV) or Cb Y Cr Y (UYVY); x and width are even.
      const std::uint8_t pair[4] = {luma, 128, luma, 128};
      const std::uint8_t* pattern = frame.format == PixelFormat::kYUYV ? pair : pair + 1;
      for (std::uint32_t y = r.y; y < r.y + r.height; ++y) {
        std::uint8_t* row = frame.data[0] + std::size_t{y} * frame.pitch[0] + std::size_t{r.x} * 2;
        for (std::uint32_t i = 0; i < r.width * 2; ++i) row[i] = pattern[i % 2];
      }
      break;
    }
    case PixelFormat::kNV12:
    case PixelFormat::kI420: {
      for (std::uint32_t y = r.y; y < r.y + r.height; ++y)
        std::memset(frame.data[0] + std::size_t{y} * frame.pitch[0] + r.x, luma, r.width);
      for (std::uint32_t y = r.y / 2; y < (r.y + r.height) / 2; ++y) {
        if (frame.format == PixelFormat::kNV12) {
          std::memset(frame.data[1] + std::size_t{y} * frame.pitch[1] + r.x, 128, r.width);
        } else {
          std::memset(frame.data[1] + std::size_t{y} * frame.pitch[1] + r.x / 2, 128, r.width / 2);
          std::memset(frame.data[2] + std::size_t{y} * frame.pitch[2] + r.x / 2, 128, r.width / 2);
        }
      }
      break;
    }
    default:
      return false;
  }
  return true;
}

std::optional<double> avMarkerLuma(const Frame& frame) noexcept {
  const AvMarkerRect r = avMarkerRect(frame.width, frame.height);
  if (!readable(frame) || r.width == 0) return std::nullopt;
  // The middle half in each direction: the block's edges ring after lossy compression.
  std::uint64_t sum = 0, n = 0;
  for (std::uint32_t y = r.y + r.height / 4; y < r.y + r.height - r.height / 4; ++y) {
    for (std::uint32_t x = r.x + r.width / 4; x < r.x + r.width - r.width / 4; ++x, ++n)
      sum += *lumaAt(frame, x, y);
  }
  return n ? static_cast<double>(sum) / static_cast<double>(n) : std::optional<double>{};
}

}  // namespace zerohop
