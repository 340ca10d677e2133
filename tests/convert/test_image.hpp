#pragma once
// Test helper: an image in its own host storage with arbitrary (odd) pitches, bound to a Frame,
// plus PSNR and reference BT.601 formulas used by the golden tests.
// Thread-safety: thread-bound test helper.

#include <cmath>
#include <cstdint>
#include <cstring>
#include <random>
#include <vector>

#include "zerohop/frame.hpp"

namespace zerohop::testing {

/// Bytes of meaningful data in one row of `plane`.
inline std::uint32_t planeRowBytes(PixelFormat f, std::uint32_t plane, std::uint32_t w) {
  switch (f) {
    case PixelFormat::kYUYV:
    case PixelFormat::kUYVY:
      return w * 2;
    case PixelFormat::kRGB24:
      return w * 3;
    case PixelFormat::kBGRx:
    case PixelFormat::kRGBA:
      return w * 4;
    case PixelFormat::kNV12:
      return plane == 0 ? w : (w + 1) / 2 * 2;
    case PixelFormat::kI420:
      return plane == 0 ? w : (w + 1) / 2;
    default:
      return 0;
  }
}
inline std::uint32_t planeRows(PixelFormat f, std::uint32_t plane, std::uint32_t h) {
  if ((f == PixelFormat::kNV12 || f == PixelFormat::kI420) && plane > 0) return (h + 1) / 2;
  return h;
}

class TestImage {
 public:
  /// Each plane's pitch is its row size plus `extraPitch` bytes (use an odd number to catch pitch bugs).
  TestImage(PixelFormat format, std::uint32_t width, std::uint32_t height, std::uint32_t extraPitch = 0) {
    frame_.format = format;
    frame_.width = width;
    frame_.height = height;
    frame_.memory = MemoryKind::kHost;
    frame_.planeCount = planeCount(format);
    std::size_t total = 0;
    std::array<std::size_t, kMaxPlanes> offsets{};
    for (std::uint32_t p = 0; p < frame_.planeCount; ++p) {
      frame_.pitch[p] = planeRowBytes(format, p, width) + extraPitch;
      offsets[p] = total;
      total += static_cast<std::size_t>(frame_.pitch[p]) * planeRows(format, p, height);
    }
    storage_.assign(total, 0);
    for (std::uint32_t p = 0; p < frame_.planeCount; ++p) frame_.data[p] = storage_.data() + offsets[p];
    frame_.capacity = total;
    frame_.bytesUsed = total;
  }
  /// A compressed frame holding `bytes`.
  static TestImage compressed(PixelFormat format, std::uint32_t width, std::uint32_t height,
                              const std::vector<std::uint8_t>& bytes) {
    TestImage img;
    img.frame_.format = format;
    img.frame_.width = width;
    img.frame_.height = height;
    img.frame_.planeCount = 1;
    img.storage_ = bytes;
    img.storage_.resize(bytes.size() + 16);  // capacity larger than the payload, as in a pool slot
    img.frame_.data[0] = img.storage_.data();
    img.frame_.pitch[0] = static_cast<std::uint32_t>(img.storage_.size());
    img.frame_.capacity = img.storage_.size();
    img.frame_.bytesUsed = bytes.size();
    return img;
  }

  Frame& frame() { return frame_; }
  const Frame& frame() const { return frame_; }
  std::uint8_t* row(std::uint32_t plane, std::uint32_t y) {
    return frame_.data[plane] + static_cast<std::size_t>(y) * frame_.pitch[plane];
  }
  const std::uint8_t* row(std::uint32_t plane, std::uint32_t y) const {
    return frame_.data[plane] + static_cast<std::size_t>(y) * frame_.pitch[plane];
  }
  std::uint8_t at(std::uint32_t plane, std::uint32_t x, std::uint32_t y) const { return row(plane, y)[x]; }
  void poison(std::uint8_t value = 0xCD) { std::memset(storage_.data(), value, storage_.size()); }
  void fillRandom(std::uint32_t seed) {
    std::mt19937 rng(seed);
    for (auto& b : storage_) b = static_cast<std::uint8_t>(rng());
  }
  /// True if every padding byte (beyond the row data) still holds `value`.
  bool paddingIs(std::uint8_t value) const {
    for (std::uint32_t p = 0; p < frame_.planeCount; ++p) {
      const std::uint32_t used = planeRowBytes(frame_.format, p, frame_.width);
      for (std::uint32_t y = 0; y < planeRows(frame_.format, p, frame_.height); ++y) {
        for (std::uint32_t x = used; x < frame_.pitch[p]; ++x) {
          if (row(p, y)[x] != value) return false;
        }
      }
    }
    return true;
  }
  std::vector<std::uint8_t>& storage() { return storage_; }

 private:
  TestImage() = default;
  std::vector<std::uint8_t> storage_;
  Frame frame_{};
};

/// Peak signal-to-noise ratio (dB) of two 8-bit planes; 99 for identical planes.
inline double psnr(const std::uint8_t* a, std::uint32_t aPitch, const std::uint8_t* b, std::uint32_t bPitch,
                   std::uint32_t width, std::uint32_t height) {
  double sse = 0;
  for (std::uint32_t y = 0; y < height; ++y) {
    for (std::uint32_t x = 0; x < width; ++x) {
      const double d = double(a[y * std::size_t{aPitch} + x]) - double(b[y * std::size_t{bPitch} + x]);
      sse += d * d;
    }
  }
  if (sse == 0) return 99.0;
  const double mse = sse / (double(width) * height);
  return 10.0 * std::log10(255.0 * 255.0 / mse);
}

/// BT.601 limited range (ITU-R BT.601, studio swing) from 8-bit R'G'B', unrounded:
///   Y  = 16  + ( 65.481 R + 128.553 G +  24.966 B) / 255
///   Cb = 128 + (-37.797 R -  74.203 G + 112.000 B) / 255
///   Cr = 128 + (112.000 R -  93.786 G -  18.214 B) / 255
struct Yuv {
  double y, u, v;
};
inline Yuv bt601Limited(double r, double g, double b) {
  return {16.0 + (65.481 * r + 128.553 * g + 24.966 * b) / 255.0,
          128.0 + (-37.797 * r - 74.203 * g + 112.0 * b) / 255.0,
          128.0 + (112.0 * r - 93.786 * g - 18.214 * b) / 255.0};
}

}  // namespace zerohop::testing
