// The checks of a GpuConverter request (no CUDA call) and the crop view it converts from.
#include "gpu/convert_plan.hpp"

#include "zerohop/error.hpp"

namespace zerohop::gpuconvert {
namespace {

[[noreturn]] void refuse(const std::string& what) {
  throw Error(Errc::kInvalidArgument, "GpuConverter: " + what);
}

std::string sizeText(std::uint32_t w, std::uint32_t h) {
  return std::to_string(w) + "x" + std::to_string(h);
}

std::string rectText(const PixelRect& r) {
  std::string text = "(x ";
  text += std::to_string(r.x);
  text += ", y ";
  text += std::to_string(r.y);
  text += ", ";
  text += sizeText(r.width, r.height);
  text += ")";
  return text;
}

void checkPlanes(const Frame& f, const char* which) {
  for (std::uint32_t i = 0; i < planeCount(f.format); ++i) {
    if (!f.data[i] || f.pitch[i] < planeShape(f.format, i, f.width, f.height).widthBytes) {
      refuse(std::string(which) + " plane " + std::to_string(i) + " of " + frameText(f) +
             " is null or its pitch is too small");
    }
  }
}

void checkCrop(const Frame& src, const PixelRect& r) {
  if (r.width == 0 || r.height == 0) refuse("zero size crop " + rectText(r) + " of " + frameText(src));
  if (std::uint64_t{r.x} + r.width > src.width || std::uint64_t{r.y} + r.height > src.height) {
    refuse("crop " + rectText(r) + " is outside the " + sizeText(src.width, src.height) + " source frame");
  }
  if ((isPacked422(src.format) || is420(src.format)) && (r.x % 2 != 0 || r.width % 2 != 0)) {
    refuse("odd crop " + rectText(r) + ": " + std::string(formatName(src.format)) +
           " (chroma subsampled horizontally) needs an even x and width");
  }
  if (is420(src.format) && (r.y % 2 != 0 || r.height % 2 != 0)) {
    refuse("odd crop " + rectText(r) + ": 4:2:0 " + std::string(formatName(src.format)) +
           " needs an even x, y, width and height");
  }
}

// `src` seen through `r`: the plane pointers moved to the rectangle's first pixel, the size reduced.
Frame cropView(const Frame& src, const PixelRect& r) {
  Frame v = src;
  v.width = r.width;
  v.height = r.height;
  auto move = [&](std::uint32_t plane, std::uint32_t bytesX, std::uint32_t row) {
    v.data[plane] += static_cast<std::size_t>(row) * src.pitch[plane] + bytesX;
  };
  switch (src.format) {
    case PixelFormat::kYUYV:
    case PixelFormat::kUYVY:
      move(0, 2 * r.x, r.y);
      break;
    case PixelFormat::kRGB24:
      move(0, 3 * r.x, r.y);
      break;
    case PixelFormat::kBGRx:
    case PixelFormat::kRGBA:
      move(0, 4 * r.x, r.y);
      break;
    case PixelFormat::kNV12:
      move(0, r.x, r.y);
      move(1, r.x, r.y / 2);
      break;
    case PixelFormat::kI420:
      move(0, r.x, r.y);
      move(1, r.x / 2, r.y / 2);
      move(2, r.x / 2, r.y / 2);
      break;
    default:
      break;
  }
  return v;
}

}  // namespace

bool isPacked422(PixelFormat f) {
  return f == PixelFormat::kYUYV || f == PixelFormat::kUYVY;
}
bool isRgb(PixelFormat f) {
  return f == PixelFormat::kRGB24 || f == PixelFormat::kBGRx || f == PixelFormat::kRGBA;
}
bool is420(PixelFormat f) {
  return f == PixelFormat::kNV12 || f == PixelFormat::kI420;
}
bool isRaw(PixelFormat f) {
  return isPacked422(f) || isRgb(f) || is420(f);
}

PlaneShape planeShape(PixelFormat f, std::uint32_t i, std::uint32_t w, std::uint32_t h) {
  switch (f) {
    case PixelFormat::kYUYV:
    case PixelFormat::kUYVY:
      return {w * 2, h};
    case PixelFormat::kRGB24:
      return {w * 3, h};
    case PixelFormat::kBGRx:
    case PixelFormat::kRGBA:
      return {w * 4, h};
    case PixelFormat::kNV12:
      return i == 0 ? PlaneShape{w, h} : PlaneShape{w, h / 2};
    case PixelFormat::kI420:
      return i == 0 ? PlaneShape{w, h} : PlaneShape{w / 2, h / 2};
    default:
      return {};
  }
}

std::size_t planeSpan(std::uint32_t pitch, const PlaneShape& s) {
  return static_cast<std::size_t>(pitch) * (s.rows - 1) + s.widthBytes;
}

std::string frameText(const Frame& f) {
  return std::string(formatName(f.format)) + " " + sizeText(f.width, f.height) + " " +
         memoryKindName(f.memory);
}

ConvertPlan planConversion(const Frame& src, const Frame& dst, const ConvertOptions& options,
                           bool allowScale) {
  if (!GpuConverter::supports(src.format, dst.format)) {
    refuse("cannot convert " + std::string(formatName(src.format)) + " to " +
           std::string(formatName(dst.format)));
  }
  if (dst.memory != MemoryKind::kDevice) refuse("destination must be device memory, got " + frameText(dst));
  if (src.width == 0 || src.height == 0 || dst.width == 0 || dst.height == 0) {
    refuse("zero size: " + frameText(src) + " -> " + frameText(dst));
  }
  const bool srcEvenWidth = isPacked422(src.format) || is420(src.format);
  if ((srcEvenWidth && src.width % 2 != 0) || (is420(src.format) && src.height % 2 != 0)) {
    refuse(frameText(src) + " -> " + std::string(formatName(dst.format)) + " needs an even width and height");
  }
  checkPlanes(src, "source");
  ConvertPlan plan;
  plan.source = src;
  if (options.crop) {
    checkCrop(src, *options.crop);
    plan.source = cropView(src, *options.crop);
  }
  const Frame& region = plan.source;
  const bool sameSize = region.width == dst.width && region.height == dst.height;
  if (!sameSize && !allowScale) {
    refuse("size mismatch " + frameText(region) + " -> " + frameText(dst) +
           " (pass ConvertOptions to scale)");
  }
  if (!sameSize && !GpuConverter::supportsScaling(src.format, dst.format)) {
    refuse("cannot scale " + std::string(formatName(src.format)) + " to " +
           std::string(formatName(dst.format)) + " (scaled destinations: nv12, i420, rgba); " +
           frameText(region) + " -> " + frameText(dst));
  }
  if (is420(dst.format) && (dst.width % 2 != 0 || dst.height % 2 != 0)) {
    refuse(frameText(region) + " -> " + frameText(dst) + " needs an even width and height");
  }
  checkPlanes(dst, "destination");
  plan.resample = !sameSize || (dst.format == PixelFormat::kRGBA && src.format != PixelFormat::kRGBA);
  return plan;
}

}  // namespace zerohop::gpuconvert
