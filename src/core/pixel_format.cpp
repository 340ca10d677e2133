#include "zerohop/pixel_format.hpp"

#include <algorithm>
#include <cctype>
#include <string>

#include "zerohop/error.hpp"

namespace zerohop {
namespace {

constexpr std::uint32_t fourcc(char a, char b, char c, char d) {
  return static_cast<std::uint32_t>(a) | (static_cast<std::uint32_t>(b) << 8) |
         (static_cast<std::uint32_t>(c) << 16) | (static_cast<std::uint32_t>(d) << 24);
}

struct FormatEntry {
  PixelFormat format;
  std::string_view name;
  std::uint32_t fourcc;
  std::uint32_t planes;
  bool compressed;
};

constexpr std::array<FormatEntry, 10> kFormats{{
    {PixelFormat::kYUYV, "yuyv", fourcc('Y', 'U', 'Y', 'V'), 1, false},
    {PixelFormat::kUYVY, "uyvy", fourcc('U', 'Y', 'V', 'Y'), 1, false},
    {PixelFormat::kNV12, "nv12", fourcc('N', 'V', '1', '2'), 2, false},
    {PixelFormat::kI420, "i420", fourcc('Y', 'U', '1', '2'), 3, false},
    {PixelFormat::kRGB24, "rgb24", fourcc('R', 'G', 'B', '3'), 1, false},
    {PixelFormat::kBGRx, "bgrx", fourcc('X', 'R', '2', '4'), 1, false},
    {PixelFormat::kRGBA, "rgba", fourcc('A', 'B', '2', '4'), 1, false},
    {PixelFormat::kMJPEG, "mjpeg", fourcc('M', 'J', 'P', 'G'), 1, true},
    {PixelFormat::kH264, "h264", fourcc('H', '2', '6', '4'), 1, true},
    {PixelFormat::kOpus, "opus", fourcc('O', 'p', 'u', 's'), 1, true},
}};

const FormatEntry* find(PixelFormat format) {
  for (const auto& e : kFormats) {
    if (e.format == format) return &e;
  }
  return nullptr;
}

std::uint32_t alignUp(std::uint32_t v, std::uint32_t a) { return (v + a - 1) & ~(a - 1); }

}  // namespace

std::string_view formatName(PixelFormat format) noexcept {
  const auto* e = find(format);
  return e ? e->name : "unknown";
}

std::optional<PixelFormat> parseFormat(std::string_view name) noexcept {
  std::string lower(name);
  std::transform(lower.begin(), lower.end(), lower.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  if (lower == "yuy2") lower = "yuyv";
  if (lower == "mjpg" || lower == "jpeg") lower = "mjpeg";
  if (lower == "yu12") lower = "i420";
  for (const auto& e : kFormats) {
    if (e.name == lower) return e.format;
  }
  return std::nullopt;
}

std::uint32_t formatFourcc(PixelFormat format) noexcept {
  const auto* e = find(format);
  return e ? e->fourcc : 0;
}

std::optional<PixelFormat> formatFromFourcc(std::uint32_t code) noexcept {
  for (const auto& e : kFormats) {
    if (e.fourcc == code) return e.format;
  }
  if (code == fourcc('J', 'P', 'E', 'G')) return PixelFormat::kMJPEG;
  if (code == fourcc('B', 'X', '2', '4')) return PixelFormat::kBGRx;
  return std::nullopt;
}

bool isCompressed(PixelFormat format) noexcept {
  const auto* e = find(format);
  return e && e->compressed;
}

std::uint32_t planeCount(PixelFormat format) noexcept {
  const auto* e = find(format);
  return e ? e->planes : 0;
}

ImageLayout computeLayout(PixelFormat format, std::uint32_t width, std::uint32_t height,
                          std::uint32_t pitchAlign) {
  if (width == 0 || height == 0 || width > 16384 || height > 16384) {
    throw Error(Errc::kInvalidArgument, "image size " + std::to_string(width) + "x" +
                                            std::to_string(height) + " is outside 1..16384");
  }
  if (pitchAlign == 0 || (pitchAlign & (pitchAlign - 1)) != 0) {
    throw Error(Errc::kInvalidArgument, "pitch alignment must be a power of two");
  }
  const auto* e = find(format);
  if (!e) throw Error(Errc::kInvalidArgument, "unknown pixel format");
  const bool chroma420 = format == PixelFormat::kNV12 || format == PixelFormat::kI420;
  const bool chroma422 = format == PixelFormat::kYUYV || format == PixelFormat::kUYVY;
  if ((chroma420 || chroma422) && (width % 2) != 0) {
    throw Error(Errc::kInvalidArgument,
                std::string(e->name) + " needs an even width, got " + std::to_string(width));
  }
  if (chroma420 && (height % 2) != 0) {
    throw Error(Errc::kInvalidArgument,
                std::string(e->name) + " needs an even height, got " + std::to_string(height));
  }

  ImageLayout l;
  l.format = format;
  l.width = width;
  l.height = height;
  l.planeCount = e->planes;
  auto plane = [&](std::size_t i, std::uint32_t widthBytes, std::uint32_t rows, std::uint32_t offset) {
    l.planes[i] = PlaneLayout{offset, alignUp(widthBytes, pitchAlign), rows, widthBytes};
    return offset + l.planes[i].pitch * rows;
  };
  std::uint32_t end = 0;
  switch (format) {
    case PixelFormat::kYUYV:
    case PixelFormat::kUYVY: end = plane(0, width * 2, height, 0); break;
    case PixelFormat::kRGB24: end = plane(0, width * 3, height, 0); break;
    case PixelFormat::kBGRx:
    case PixelFormat::kRGBA: end = plane(0, width * 4, height, 0); break;
    case PixelFormat::kNV12:
      end = plane(0, width, height, 0);
      end = plane(1, width, height / 2, end);
      break;
    case PixelFormat::kI420:
      end = plane(0, width, height, 0);
      end = plane(1, width / 2, height / 2, end);
      end = plane(2, width / 2, height / 2, end);
      break;
    case PixelFormat::kMJPEG:
    case PixelFormat::kH264: {
      // Worst case for a camera frame: the raw 4:2:2 size plus headers. Real frames are far smaller.
      const std::uint32_t cap = alignUp(width * height * 2 + 65536, 4096);
      l.planes[0] = PlaneLayout{0, cap, 1, cap};
      end = cap;
      break;
    }
    case PixelFormat::kOpus: {
      // One packet: at most 1275 bytes a 20 ms frame (RFC 6716, 3.2.1), a few frames a packet.
      const std::uint32_t cap = 8192;
      l.planes[0] = PlaneLayout{0, cap, 1, cap};
      end = cap;
      break;
    }
    case PixelFormat::kUnknown: break;
  }
  l.totalBytes = end;
  return l;
}

}  // namespace zerohop
