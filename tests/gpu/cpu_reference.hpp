#pragma once
// CPU references for the GPU conversions, written from the formulas, not from the kernels.
//   4:2:2 -> 4:2:0 chroma: C(x, y) = (C422(x, 2y) + C422(x, 2y + 1) + 1) >> 1 (round half up); luma copied.
//   NV12 <-> I420: exact rearrangement.
//   RGB -> YUV in double precision: Y' = Kr R + Kg G + Kb B; limited: Y = 16 + 219/255 Y',
//   Cb = 128 + 224/255 (B - Y') / (2 (1 - Kb)), Cr = 128 + 224/255 (R - Y') / (2 (1 - Kr)); full: no
//   scaling, no offset on Y. Chroma of a 2x2 block from the mean R, G, B of its four pixels.
//   Rounded half up, clamped to 0..255. The GPU computes in float: allowed difference +-1.

#include <array>
#include <cstdint>
#include <random>
#include <vector>

#include "zerohop/frame.hpp"
#include "zerohop/pixel_format.hpp"

namespace zerohop::test {

/// An image in ordinary host memory, one vector per plane, with any pitch (>= the row's bytes).
struct HostImage {
  PixelFormat format = PixelFormat::kUnknown;
  std::uint32_t width = 0;
  std::uint32_t height = 0;
  std::uint32_t planeCount = 0;
  std::array<std::uint32_t, kMaxPlanes> pitch{};
  std::array<std::uint32_t, kMaxPlanes> rowBytes{};
  std::array<std::uint32_t, kMaxPlanes> rows{};
  std::array<std::vector<std::uint8_t>, kMaxPlanes> plane;

  std::uint8_t& at(std::uint32_t p, std::uint32_t x, std::uint32_t y) { return plane[p][std::size_t(y) * pitch[p] + x]; }
  std::uint8_t at(std::uint32_t p, std::uint32_t x, std::uint32_t y) const {
    return plane[p][std::size_t(y) * pitch[p] + x];
  }
};

/// Allocates an image whose rows are `extraPitch` bytes longer than their pixels (0 = tight);
/// padding bytes are filled with `padding`.
HostImage makeImage(PixelFormat format, std::uint32_t width, std::uint32_t height, std::uint32_t extraPitch = 0,
                    std::uint8_t padding = 0xEE);

/// Uniformly random pixel bytes.
void fillRandom(HostImage& image, std::mt19937& rng);
/// Camera-like content: smooth gradients and soft shapes, sensor noise, a few hard edges and
/// saturated (0 / 255) areas, chroma near neutral.
void fillCameraLike(HostImage& image, std::mt19937& rng);

/// The reference conversion; the result has tight pitches. `color` is used for RGB sources only.
HostImage referenceConvert(const HostImage& src, PixelFormat dstFormat, const ColorDesc& color);

}  // namespace zerohop::test
