#include "cpu_reference.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>

namespace zerohop::test {
namespace {

std::uint32_t bytesPerPixel(PixelFormat f) {
  switch (f) {
    case PixelFormat::kRGB24: return 3;
    case PixelFormat::kBGRx:
    case PixelFormat::kRGBA: return 4;
    default: return 2;
  }
}

std::uint8_t roundClamp(double v) { return static_cast<std::uint8_t>(std::clamp(std::floor(v + 0.5), 0.0, 255.0)); }

struct Rgb {
  double r, g, b;
};
Rgb rgbAt(const HostImage& s, std::uint32_t x, std::uint32_t y) {
  const std::uint32_t bpp = bytesPerPixel(s.format);
  const std::uint8_t* p = &s.plane[0][std::size_t(y) * s.pitch[0] + std::size_t(x) * bpp];
  if (s.format == PixelFormat::kBGRx) return {double(p[2]), double(p[1]), double(p[0])};
  return {double(p[0]), double(p[1]), double(p[2])};
}

}  // namespace

HostImage makeImage(PixelFormat format, std::uint32_t width, std::uint32_t height, std::uint32_t extraPitch,
                    std::uint8_t padding) {
  HostImage im;
  im.format = format;
  im.width = width;
  im.height = height;
  im.planeCount = planeCount(format);
  for (std::uint32_t p = 0; p < im.planeCount; ++p) {
    std::uint32_t rb = 0, rows = height;
    switch (format) {
      case PixelFormat::kYUYV:
      case PixelFormat::kUYVY: rb = width * 2; break;
      case PixelFormat::kRGB24: rb = width * 3; break;
      case PixelFormat::kBGRx:
      case PixelFormat::kRGBA: rb = width * 4; break;
      case PixelFormat::kNV12: rb = width; rows = p == 0 ? height : height / 2; break;
      case PixelFormat::kI420:
        rb = p == 0 ? width : width / 2;
        rows = p == 0 ? height : height / 2;
        break;
      default: throw std::invalid_argument("makeImage: unsupported format");
    }
    im.rowBytes[p] = rb;
    im.rows[p] = rows;
    im.pitch[p] = rb + extraPitch;
    im.plane[p].assign(std::size_t(im.pitch[p]) * rows, padding);
  }
  return im;
}

void fillRandom(HostImage& im, std::mt19937& rng) {
  std::uniform_int_distribution<int> byte(0, 255);
  for (std::uint32_t p = 0; p < im.planeCount; ++p)
    for (std::uint32_t y = 0; y < im.rows[p]; ++y)
      for (std::uint32_t x = 0; x < im.rowBytes[p]; ++x) im.at(p, x, y) = static_cast<std::uint8_t>(byte(rng));
}

void fillCameraLike(HostImage& im, std::mt19937& rng) {
  std::normal_distribution<double> noise(0.0, 2.0);
  const double w = im.width, h = im.height;
  const double phase = std::uniform_real_distribution<double>(0, 6.28)(rng);
  // Per-pixel "scene" value for channel c at (x, y): gradient + blobs + a hard-edged block + clipping.
  auto scene = [&](double x, double y, int c) {
    double v = 40 + 150 * (x / w) * (0.6 + 0.4 * y / h);
    v += 35 * std::sin(phase + 6.0 * x / w + c) * std::cos(4.0 * y / h);
    if (x > 0.6 * w && x < 0.8 * w && y > 0.2 * h && y < 0.5 * h) v = 250;  // bright window, clips
    if (x < 0.1 * w && y > 0.7 * h) v = 3;                                  // shadow
    return v + noise(rng);
  };
  auto chroma = [&](double x, double /*y*/, int c) { return 128 + 20 * std::sin(phase + 3.0 * x / w + 2 * c) + noise(rng); };
  const PixelFormat f = im.format;
  for (std::uint32_t y = 0; y < im.height; ++y) {
    for (std::uint32_t x = 0; x < im.width; ++x) {
      switch (f) {
        case PixelFormat::kYUYV:
        case PixelFormat::kUYVY: {
          const bool yuyv = f == PixelFormat::kYUYV;
          const std::uint32_t base = (x / 2) * 4;
          im.at(0, base + (yuyv ? 0 : 1) + (x % 2) * 2, y) = roundClamp(scene(x, y, 0));
          if (x % 2 == 0) {
            im.at(0, base + (yuyv ? 1 : 0), y) = roundClamp(chroma(x, y, 0));
            im.at(0, base + (yuyv ? 3 : 2), y) = roundClamp(chroma(x, y, 1));
          }
          break;
        }
        case PixelFormat::kNV12:
        case PixelFormat::kI420:
          im.at(0, x, y) = roundClamp(scene(x, y, 0));
          if (x % 2 == 0 && y % 2 == 0) {
            if (f == PixelFormat::kNV12) {
              im.at(1, x, y / 2) = roundClamp(chroma(x, y, 0));
              im.at(1, x + 1, y / 2) = roundClamp(chroma(x, y, 1));
            } else {
              im.at(1, x / 2, y / 2) = roundClamp(chroma(x, y, 0));
              im.at(2, x / 2, y / 2) = roundClamp(chroma(x, y, 1));
            }
          }
          break;
        default: {
          const std::uint32_t bpp = bytesPerPixel(f);
          for (std::uint32_t c = 0; c < bpp; ++c) im.at(0, x * bpp + c, y) = roundClamp(scene(x, y, int(c)));
          break;
        }
      }
    }
  }
}

HostImage referenceConvert(const HostImage& s, PixelFormat dstFormat, const ColorDesc& color) {
  HostImage d = makeImage(dstFormat, s.width, s.height);
  const std::uint32_t w = s.width, h = s.height;
  if (s.format == dstFormat) {
    for (std::uint32_t p = 0; p < s.planeCount; ++p)
      for (std::uint32_t y = 0; y < s.rows[p]; ++y)
        for (std::uint32_t x = 0; x < s.rowBytes[p]; ++x) d.at(p, x, y) = s.at(p, x, y);
    return d;
  }
  auto putChroma = [&](std::uint32_t cx, std::uint32_t cy, std::uint8_t u, std::uint8_t v) {
    if (dstFormat == PixelFormat::kNV12) {
      d.at(1, 2 * cx, cy) = u;
      d.at(1, 2 * cx + 1, cy) = v;
    } else {
      d.at(1, cx, cy) = u;
      d.at(2, cx, cy) = v;
    }
  };
  switch (s.format) {
    case PixelFormat::kYUYV:
    case PixelFormat::kUYVY: {
      const bool yuyv = s.format == PixelFormat::kYUYV;
      const std::uint32_t yOff = yuyv ? 0 : 1, uOff = yuyv ? 1 : 0, vOff = yuyv ? 3 : 2;
      for (std::uint32_t y = 0; y < h; ++y)
        for (std::uint32_t x = 0; x < w; ++x) d.at(0, x, y) = s.at(0, (x / 2) * 4 + yOff + (x % 2) * 2, y);
      for (std::uint32_t cy = 0; cy < h / 2; ++cy)
        for (std::uint32_t cx = 0; cx < w / 2; ++cx) {
          const unsigned u = (s.at(0, cx * 4 + uOff, 2 * cy) + s.at(0, cx * 4 + uOff, 2 * cy + 1) + 1u) >> 1;
          const unsigned v = (s.at(0, cx * 4 + vOff, 2 * cy) + s.at(0, cx * 4 + vOff, 2 * cy + 1) + 1u) >> 1;
          putChroma(cx, cy, std::uint8_t(u), std::uint8_t(v));
        }
      return d;
    }
    case PixelFormat::kNV12:
    case PixelFormat::kI420: {
      for (std::uint32_t y = 0; y < h; ++y)
        for (std::uint32_t x = 0; x < w; ++x) d.at(0, x, y) = s.at(0, x, y);
      for (std::uint32_t cy = 0; cy < h / 2; ++cy)
        for (std::uint32_t cx = 0; cx < w / 2; ++cx) {
          const bool nv12 = s.format == PixelFormat::kNV12;
          putChroma(cx, cy, nv12 ? s.at(1, 2 * cx, cy) : s.at(1, cx, cy),
                    nv12 ? s.at(1, 2 * cx + 1, cy) : s.at(2, cx, cy));
        }
      return d;
    }
    default: break;
  }
  // RGB -> YUV
  const double kr = color.matrix == ColorMatrix::kBt709 ? 0.2126 : 0.299;
  const double kb = color.matrix == ColorMatrix::kBt709 ? 0.0722 : 0.114;
  const double kg = 1 - kr - kb;
  const bool limited = color.range == ColorRange::kLimited;
  auto luma = [&](const Rgb& c) { return kr * c.r + kg * c.g + kb * c.b; };
  auto yOut = [&](double yp) { return limited ? 16 + 219.0 / 255.0 * yp : yp; };
  const double cs = limited ? 224.0 / 255.0 : 1.0;
  for (std::uint32_t y = 0; y < h; ++y)
    for (std::uint32_t x = 0; x < w; ++x) d.at(0, x, y) = roundClamp(yOut(luma(rgbAt(s, x, y))));
  for (std::uint32_t cy = 0; cy < h / 2; ++cy)
    for (std::uint32_t cx = 0; cx < w / 2; ++cx) {
      Rgb m{0, 0, 0};
      for (std::uint32_t dy = 0; dy < 2; ++dy)
        for (std::uint32_t dx = 0; dx < 2; ++dx) {
          const Rgb c = rgbAt(s, 2 * cx + dx, 2 * cy + dy);
          m.r += c.r / 4;
          m.g += c.g / 4;
          m.b += c.b / 4;
        }
      const double yp = luma(m);
      putChroma(cx, cy, roundClamp(128 + cs * (m.b - yp) / (2 * (1 - kb))),
                roundClamp(128 + cs * (m.r - yp) / (2 * (1 - kr))));
    }
  return d;
}

}  // namespace zerohop::test
