#pragma once
// Straightforward per-pixel reference conversions for the golden tests: what libyuv should produce,
// written from the format definitions, not from libyuv.
// Thread-safety: pure functions, reentrant.

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <stdexcept>
#include <vector>

#include "test_image.hpp"

namespace zerohop::testing {

/// An unrounded 4:2:0 image: Y (w*h) and U, V ((w/2)*(h/2)) as doubles.
struct Reference420 {
  std::uint32_t width = 0, height = 0;
  std::vector<double> y, u, v;
};

/// Packed/planar YUV sources keep their samples: Y is copied, 4:2:2 chroma is the mean of the two
/// rows a 4:2:0 sample covers, 4:2:0 chroma is copied. RGB sources: BT.601 limited range, Y per
/// pixel, chroma from the mean R, G, B of each 2x2 block.
inline Reference420 reference420(const TestImage& src) {
  const Frame& f = src.frame();
  Reference420 r;
  r.width = f.width;
  r.height = f.height;
  const std::uint32_t w2 = f.width / 2, h2 = f.height / 2;
  r.y.resize(std::size_t{f.width} * f.height);
  r.u.resize(std::size_t{w2} * h2);
  r.v.resize(std::size_t{w2} * h2);
  auto packed422 = [&](int yOff, int uOff, int vOff) {
    for (std::uint32_t y = 0; y < f.height; ++y)
      for (std::uint32_t x = 0; x < f.width; ++x) r.y[y * f.width + x] = src.at(0, 2 * x + yOff, y);
    for (std::uint32_t cy = 0; cy < h2; ++cy)
      for (std::uint32_t cx = 0; cx < w2; ++cx) {
        r.u[cy * w2 + cx] = (src.at(0, 4 * cx + uOff, 2 * cy) + src.at(0, 4 * cx + uOff, 2 * cy + 1)) / 2.0;
        r.v[cy * w2 + cx] = (src.at(0, 4 * cx + vOff, 2 * cy) + src.at(0, 4 * cx + vOff, 2 * cy + 1)) / 2.0;
      }
  };
  auto rgb = [&](int bpp, int ri, int gi, int bi) {
    for (std::uint32_t y = 0; y < f.height; ++y)
      for (std::uint32_t x = 0; x < f.width; ++x) {
        const std::uint8_t* p = src.row(0, y) + x * bpp;
        r.y[y * f.width + x] = bt601Limited(p[ri], p[gi], p[bi]).y;
      }
    for (std::uint32_t cy = 0; cy < h2; ++cy)
      for (std::uint32_t cx = 0; cx < w2; ++cx) {
        double sr = 0, sg = 0, sb = 0;
        for (std::uint32_t dy = 0; dy < 2; ++dy)
          for (std::uint32_t dx = 0; dx < 2; ++dx) {
            const std::uint8_t* p = src.row(0, 2 * cy + dy) + (2 * cx + dx) * bpp;
            sr += p[ri];
            sg += p[gi];
            sb += p[bi];
          }
        const Yuv c = bt601Limited(sr / 4, sg / 4, sb / 4);
        r.u[cy * w2 + cx] = c.u;
        r.v[cy * w2 + cx] = c.v;
      }
  };
  switch (f.format) {
    case PixelFormat::kYUYV:
      packed422(0, 1, 3);
      break;
    case PixelFormat::kUYVY:
      packed422(1, 0, 2);
      break;
    case PixelFormat::kNV12:
    case PixelFormat::kI420:
      for (std::uint32_t y = 0; y < f.height; ++y)
        for (std::uint32_t x = 0; x < f.width; ++x) r.y[y * f.width + x] = src.at(0, x, y);
      for (std::uint32_t cy = 0; cy < h2; ++cy)
        for (std::uint32_t cx = 0; cx < w2; ++cx) {
          const bool nv12 = f.format == PixelFormat::kNV12;
          r.u[cy * w2 + cx] = nv12 ? src.at(1, 2 * cx, cy) : src.at(1, cx, cy);
          r.v[cy * w2 + cx] = nv12 ? src.at(1, 2 * cx + 1, cy) : src.at(2, cx, cy);
        }
      break;
    case PixelFormat::kRGB24:
      rgb(3, 0, 1, 2);
      break;
    case PixelFormat::kBGRx:
      rgb(4, 2, 1, 0);
      break;
    case PixelFormat::kRGBA:
      rgb(4, 0, 1, 2);
      break;
    default:
      throw std::logic_error("reference420: unsupported source");
  }
  return r;
}

/// Sample (plane 0 = Y, 1 = U, 2 = V) of an I420 or NV12 image at (x, y) in that plane's grid.
inline std::uint8_t sample420(const TestImage& img, int plane, std::uint32_t x, std::uint32_t y) {
  if (plane == 0) return img.at(0, x, y);
  if (img.frame().format == PixelFormat::kNV12) return img.at(1, 2 * x + (plane == 2 ? 1 : 0), y);
  return img.at(static_cast<std::uint32_t>(plane), x, y);
}

struct Deviation {
  double maxY = 0, maxC = 0;
};
/// Largest absolute difference between `out` and the reference, luma and chroma separately.
inline Deviation deviation(const Reference420& ref, const TestImage& out) {
  Deviation d;
  const std::uint32_t w2 = ref.width / 2, h2 = ref.height / 2;
  for (std::uint32_t y = 0; y < ref.height; ++y)
    for (std::uint32_t x = 0; x < ref.width; ++x)
      d.maxY = std::max(d.maxY, std::abs(sample420(out, 0, x, y) - ref.y[y * ref.width + x]));
  for (std::uint32_t y = 0; y < h2; ++y)
    for (std::uint32_t x = 0; x < w2; ++x) {
      d.maxC = std::max(d.maxC, std::abs(sample420(out, 1, x, y) - ref.u[y * w2 + x]));
      d.maxC = std::max(d.maxC, std::abs(sample420(out, 2, x, y) - ref.v[y * w2 + x]));
    }
  return d;
}

}  // namespace zerohop::testing
