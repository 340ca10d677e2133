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

// The matrix of a ColorDesc and the forward / inverse formulas (cpu_reference.hpp), in double.
struct Matrix {
  double kr, kb, kg;
  bool limited;
  explicit Matrix(const ColorDesc& c)
      : kr(c.matrix == ColorMatrix::kBt709 ? 0.2126 : 0.299),
        kb(c.matrix == ColorMatrix::kBt709 ? 0.0722 : 0.114),
        kg(1 - kr - kb),
        limited(c.range == ColorRange::kLimited) {}
  double lumaPrime(const Rgb& c) const { return kr * c.r + kg * c.g + kb * c.b; }
  double y(const Rgb& c) const { return limited ? 16 + 219.0 / 255.0 * lumaPrime(c) : lumaPrime(c); }
  double chromaScale() const { return limited ? 224.0 / 255.0 : 1.0; }
  double cb(const Rgb& c) const { return 128 + chromaScale() * (c.b - lumaPrime(c)) / (2 * (1 - kb)); }
  double cr(const Rgb& c) const { return 128 + chromaScale() * (c.r - lumaPrime(c)) / (2 * (1 - kr)); }
  Rgb toRgb(double y, double cb, double cr) const {
    const double yp = limited ? (y - 16) * 255.0 / 219.0 : y;
    const double pb = (cb - 128) / chromaScale(), pr = (cr - 128) / chromaScale();
    const double b = yp + 2 * (1 - kb) * pb, r = yp + 2 * (1 - kr) * pr;
    return {r, (yp - kr * r - kb * b) / kg, b};
  }
};

// Chroma pair of 2x2 block (cx, cy) of an NV12 or I420 image.
void putChroma(HostImage& d, std::uint32_t cx, std::uint32_t cy, std::uint8_t u, std::uint8_t v) {
  if (d.format == PixelFormat::kNV12) {
    d.at(1, 2 * cx, cy) = u;
    d.at(1, 2 * cx + 1, cy) = v;
  } else {
    d.at(1, cx, cy) = u;
    d.at(2, cx, cy) = v;
  }
}

// One axis of bilinear resampling: the two source samples around dst sample d and the second's weight.
struct Tap {
  std::uint32_t i0, i1;
  double f;
};
Tap tapAt(std::uint32_t d, std::uint32_t srcSize, std::uint32_t dstSize) {
  const double pos = std::clamp((d + 0.5) * srcSize / dstSize - 0.5, 0.0, double(srcSize - 1));
  const auto i0 = static_cast<std::uint32_t>(std::floor(pos));
  return {i0, std::min(i0 + 1, srcSize - 1), pos - std::floor(pos)};
}
template <class At>
double bilinear(const At& at, const Tap& tx, const Tap& ty) {
  const double top = at(tx.i0, ty.i0) * (1 - tx.f) + at(tx.i1, ty.i0) * tx.f;
  const double bottom = at(tx.i0, ty.i1) * (1 - tx.f) + at(tx.i1, ty.i1) * tx.f;
  return top * (1 - ty.f) + bottom * ty.f;
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
          putChroma(d, cx, cy, std::uint8_t(u), std::uint8_t(v));
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
          putChroma(d, cx, cy, nv12 ? s.at(1, 2 * cx, cy) : s.at(1, cx, cy),
                    nv12 ? s.at(1, 2 * cx + 1, cy) : s.at(2, cx, cy));
        }
      return d;
    }
    default: break;
  }
  // RGB -> YUV
  const Matrix m(color);
  for (std::uint32_t y = 0; y < h; ++y)
    for (std::uint32_t x = 0; x < w; ++x) d.at(0, x, y) = roundClamp(m.y(rgbAt(s, x, y)));
  for (std::uint32_t cy = 0; cy < h / 2; ++cy)
    for (std::uint32_t cx = 0; cx < w / 2; ++cx) {
      Rgb mean{0, 0, 0};
      for (std::uint32_t dy = 0; dy < 2; ++dy)
        for (std::uint32_t dx = 0; dx < 2; ++dx) {
          const Rgb c = rgbAt(s, 2 * cx + dx, 2 * cy + dy);
          mean.r += c.r / 4;
          mean.g += c.g / 4;
          mean.b += c.b / 4;
        }
      putChroma(d, cx, cy, roundClamp(m.cb(mean)), roundClamp(m.cr(mean)));
    }
  return d;
}

HostImage cropImage(const HostImage& s, const Region& r) {
  HostImage d = makeImage(s.format, r.width, r.height);
  for (std::uint32_t p = 0; p < s.planeCount; ++p) {
    // Bytes before the region in each row, and rows above it, in plane p.
    std::uint32_t skipBytes = 0, skipRows = r.y;
    switch (s.format) {
      case PixelFormat::kNV12: skipBytes = r.x; skipRows = p == 0 ? r.y : r.y / 2; break;
      case PixelFormat::kI420:
        skipBytes = p == 0 ? r.x : r.x / 2;
        skipRows = p == 0 ? r.y : r.y / 2;
        break;
      default: skipBytes = r.x * bytesPerPixel(s.format); break;
    }
    for (std::uint32_t y = 0; y < d.rows[p]; ++y)
      for (std::uint32_t x = 0; x < d.rowBytes[p]; ++x) d.at(p, x, y) = s.at(p, skipBytes + x, skipRows + y);
  }
  return d;
}

HostImage referenceResample(const HostImage& s, PixelFormat dstFormat, std::uint32_t dw, std::uint32_t dh,
                            const ColorDesc& color) {
  HostImage d = makeImage(dstFormat, dw, dh);
  const Matrix m(color);
  const std::uint32_t w = s.width, h = s.height;
  const PixelFormat f = s.format;
  const bool rgbSource = f == PixelFormat::kRGB24 || f == PixelFormat::kBGRx || f == PixelFormat::kRGBA;
  const bool rgbaOut = dstFormat == PixelFormat::kRGBA;
  if (rgbSource) {
    auto channel = [&](std::uint32_t x, std::uint32_t y, int c) {
      if (c == 3) return f == PixelFormat::kRGBA ? double(s.at(0, 4 * x + 3, y)) : 255.0;
      const Rgb p = rgbAt(s, x, y);
      return c == 0 ? p.r : c == 1 ? p.g : p.b;
    };
    auto sample = [&](std::uint32_t x, std::uint32_t y, int c) {
      return bilinear([&](std::uint32_t sx, std::uint32_t sy) { return channel(sx, sy, c); }, tapAt(x, w, dw),
                      tapAt(y, h, dh));
    };
    for (std::uint32_t y = 0; y < dh; ++y)
      for (std::uint32_t x = 0; x < dw; ++x) {
        const Rgb c{sample(x, y, 0), sample(x, y, 1), sample(x, y, 2)};
        if (rgbaOut) {
          for (int k = 0; k < 4; ++k) d.at(0, 4 * x + k, y) = roundClamp(sample(x, y, k));
        } else {
          d.at(0, x, y) = roundClamp(m.y(c));
        }
      }
    if (rgbaOut) return d;
    for (std::uint32_t cy = 0; cy < dh / 2; ++cy)
      for (std::uint32_t cx = 0; cx < dw / 2; ++cx) {
        Rgb mean{0, 0, 0};
        for (std::uint32_t k = 0; k < 4; ++k) {
          const std::uint32_t x = 2 * cx + (k & 1), y = 2 * cy + (k >> 1);
          mean.r += sample(x, y, 0) / 4;
          mean.g += sample(x, y, 1) / 4;
          mean.b += sample(x, y, 2) / 4;
        }
        putChroma(d, cx, cy, roundClamp(m.cb(mean)), roundClamp(m.cr(mean)));
      }
    return d;
  }
  // YUV source: the luma plane and the two chroma planes, each on its own grid.
  const bool packed = f == PixelFormat::kYUYV || f == PixelFormat::kUYVY;
  const bool yuyv = f == PixelFormat::kYUYV;
  const std::uint32_t cw = w / 2, ch = packed ? h : h / 2;
  auto luma = [&](std::uint32_t x, std::uint32_t y) {
    return double(packed ? s.at(0, 2 * x + (yuyv ? 0 : 1), y) : s.at(0, x, y));
  };
  auto chroma = [&](std::uint32_t x, std::uint32_t y, int c) {  // c 0 = Cb, 1 = Cr
    if (packed) return double(s.at(0, 4 * x + (yuyv ? 1 : 0) + 2 * c, y));
    if (f == PixelFormat::kNV12) return double(s.at(1, 2 * x + c, y));
    return double(s.at(1 + c, x, y));
  };
  auto lumaSample = [&](std::uint32_t x, std::uint32_t y) {
    return bilinear(luma, tapAt(x, w, dw), tapAt(y, h, dh));
  };
  // Chroma at dst sample (x, y) of a grid dcw x dch.
  auto chromaSample = [&](std::uint32_t x, std::uint32_t y, std::uint32_t dcw, std::uint32_t dch, int c) {
    return bilinear([&](std::uint32_t sx, std::uint32_t sy) { return chroma(sx, sy, c); }, tapAt(x, cw, dcw),
                    tapAt(y, ch, dch));
  };
  if (rgbaOut) {
    for (std::uint32_t y = 0; y < dh; ++y)
      for (std::uint32_t x = 0; x < dw; ++x) {
        const Rgb c = m.toRgb(lumaSample(x, y), chromaSample(x, y, dw, dh, 0), chromaSample(x, y, dw, dh, 1));
        d.at(0, 4 * x, y) = roundClamp(c.r);
        d.at(0, 4 * x + 1, y) = roundClamp(c.g);
        d.at(0, 4 * x + 2, y) = roundClamp(c.b);
        d.at(0, 4 * x + 3, y) = 255;
      }
    return d;
  }
  for (std::uint32_t y = 0; y < dh; ++y)
    for (std::uint32_t x = 0; x < dw; ++x) d.at(0, x, y) = roundClamp(lumaSample(x, y));
  for (std::uint32_t cy = 0; cy < dh / 2; ++cy)
    for (std::uint32_t cx = 0; cx < dw / 2; ++cx) {
      putChroma(d, cx, cy, roundClamp(chromaSample(cx, cy, dw / 2, dh / 2, 0)),
                roundClamp(chromaSample(cx, cy, dw / 2, dh / 2, 1)));
    }
  return d;
}

}  // namespace zerohop::test
