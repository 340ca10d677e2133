#pragma once
// Test helper: makes camera-like JPEGs with libjpeg-turbo from the test camera's picture, and
// keeps the exact source planes they were made from (the reference for PSNR).
// Thread-safety: thread-bound test helper.

#include <turbojpeg.h>

#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "source/pattern_frames.hpp"
#include "test_image.hpp"

namespace zerohop::testing {

/// A source picture as full-resolution planar Y, Cb, Cr (4:4:4 grid; 4:2:2 chroma duplicated).
struct SourcePlanes {
  std::uint32_t width = 0, height = 0;
  std::vector<std::uint8_t> y, u422, v422;  // u422/v422: (width/2) x height, the camera's own chroma
  /// 4:2:0 chroma: mean of two 4:2:2 rows, rounded up.
  std::vector<std::uint8_t> u420() const { return down(u422); }
  std::vector<std::uint8_t> v420() const { return down(v422); }

 private:
  std::vector<std::uint8_t> down(const std::vector<std::uint8_t>& c) const {
    const std::uint32_t w2 = width / 2, h2 = height / 2;
    std::vector<std::uint8_t> out(std::size_t{w2} * h2);
    for (std::uint32_t row = 0; row < h2; ++row)
      for (std::uint32_t x = 0; x < w2; ++x)
        out[row * w2 + x] =
            static_cast<std::uint8_t>((c[2 * row * w2 + x] + c[(2 * row + 1) * w2 + x] + 1) / 2);
    return out;
  }
};

/// The test camera's frame `index` (YUYV) split into planes.
inline SourcePlanes cameraPlanes(std::uint32_t width, std::uint32_t height, std::uint64_t index = 5) {
  PatternFrames pattern(PixelFormat::kYUYV, width, height);
  TestImage yuyv(PixelFormat::kYUYV, width, height);
  pattern.render(yuyv.frame(), index,
                 Timecode{1'700'000'000'000ull + index, static_cast<std::uint32_t>(index)});
  SourcePlanes p;
  p.width = width;
  p.height = height;
  p.y.resize(std::size_t{width} * height);
  p.u422.resize(std::size_t{width / 2} * height);
  p.v422.resize(std::size_t{width / 2} * height);
  for (std::uint32_t y = 0; y < height; ++y)
    for (std::uint32_t x = 0; x < width / 2; ++x) {
      const std::uint8_t* q = yuyv.row(0, y) + 4 * x;
      p.y[y * width + 2 * x] = q[0];
      p.u422[y * (width / 2) + x] = q[1];
      p.y[y * width + 2 * x + 1] = q[2];
      p.v422[y * (width / 2) + x] = q[3];
    }
  return p;
}

/// Compresses `p` at `quality` with subsampling TJSAMP_422, _420, _444, _440, _411 or _GRAY
/// (width a multiple of 4).
inline std::vector<std::uint8_t> compressJpeg(const SourcePlanes& p, int subsamp, int quality = 85) {
  std::vector<std::uint8_t> u, v;
  const std::uint32_t w2 = p.width / 2;
  if (subsamp == TJSAMP_422) {
    u = p.u422;
    v = p.v422;
  } else if (subsamp == TJSAMP_420) {
    u = p.u420();
    v = p.v420();
  } else if (subsamp == TJSAMP_440) {  // full width, half height
    u.resize(std::size_t{p.width} * (p.height / 2));
    v.resize(u.size());
    const auto u420 = p.u420(), v420 = p.v420();
    for (std::uint32_t y = 0; y < p.height / 2; ++y)
      for (std::uint32_t x = 0; x < p.width; ++x) {
        u[y * p.width + x] = u420[y * w2 + x / 2];
        v[y * p.width + x] = v420[y * w2 + x / 2];
      }
  } else if (subsamp == TJSAMP_411) {  // quarter width, full height
    const std::uint32_t w4 = p.width / 4;
    u.resize(std::size_t{w4} * p.height);
    v.resize(u.size());
    for (std::uint32_t y = 0; y < p.height; ++y)
      for (std::uint32_t x = 0; x < w4; ++x) {
        u[y * w4 + x] =
            static_cast<std::uint8_t>((p.u422[y * w2 + 2 * x] + p.u422[y * w2 + 2 * x + 1] + 1) / 2);
        v[y * w4 + x] =
            static_cast<std::uint8_t>((p.v422[y * w2 + 2 * x] + p.v422[y * w2 + 2 * x + 1] + 1) / 2);
      }
  } else if (subsamp == TJSAMP_444) {
    u.resize(std::size_t{p.width} * p.height);
    v.resize(u.size());
    for (std::uint32_t y = 0; y < p.height; ++y)
      for (std::uint32_t x = 0; x < p.width; ++x) {
        u[y * p.width + x] = p.u422[y * w2 + x / 2];
        v[y * p.width + x] = p.v422[y * w2 + x / 2];
      }
  }
  const unsigned char* planes[3] = {p.y.data(), u.empty() ? nullptr : u.data(),
                                    v.empty() ? nullptr : v.data()};
  std::unique_ptr<void, int (*)(tjhandle)> tj(tjInitCompress(), tjDestroy);
  unsigned char* out = nullptr;
  unsigned long size = 0;
  if (tjCompressFromYUVPlanes(tj.get(), planes, static_cast<int>(p.width), nullptr,
                              static_cast<int>(p.height), subsamp, &out, &size, quality, 0) != 0) {
    throw std::runtime_error(std::string("tjCompressFromYUVPlanes: ") + tjGetErrorStr2(tj.get()));
  }
  std::vector<std::uint8_t> jpeg(out, out + size);
  tjFree(out);
  return jpeg;
}

/// A YCCK JPEG (from CMYK pixels): valid, but not a camera frame.
inline std::vector<std::uint8_t> compressCmykJpeg(std::uint32_t width, std::uint32_t height) {
  std::vector<std::uint8_t> cmyk(std::size_t{width} * height * 4);
  for (std::size_t i = 0; i < cmyk.size(); ++i) cmyk[i] = static_cast<std::uint8_t>(i * 7);
  std::unique_ptr<void, int (*)(tjhandle)> tj(tjInitCompress(), tjDestroy);
  unsigned char* out = nullptr;
  unsigned long size = 0;
  if (tjCompress2(tj.get(), cmyk.data(), static_cast<int>(width), 0, static_cast<int>(height), TJPF_CMYK,
                  &out, &size, TJSAMP_444, 85, 0) != 0) {
    throw std::runtime_error(std::string("tjCompress2(CMYK): ") + tjGetErrorStr2(tj.get()));
  }
  std::vector<std::uint8_t> jpeg(out, out + size);
  tjFree(out);
  return jpeg;
}

}  // namespace zerohop::testing
