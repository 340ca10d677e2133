#pragma once
// CPU references for the GPU conversions, written from the formulas, not from the kernels.
//   4:2:2 -> 4:2:0 chroma: C(x, y) = (C422(x, 2y) + C422(x, 2y + 1) + 1) >> 1 (round half up); luma copied.
//   NV12 <-> I420: exact rearrangement.
//   RGB -> YUV in double precision: Y' = Kr R + Kg G + Kb B; limited: Y = 16 + 219/255 Y',
//   Cb = 128 + 224/255 (B - Y') / (2 (1 - Kb)), Cr = 128 + 224/255 (R - Y') / (2 (1 - Kr)); full: no
//   scaling, no offset on Y. Chroma of a 2x2 block from the mean R, G, B of its four pixels.
//   Rounded half up, clamped to 0..255. The GPU computes in float: allowed difference +-1.
//   YUV -> RGBA in double: Y' = (Y - 16) 255/219, Pb = (Cb - 128) 255/224, Pr likewise (full range:
//   Y' = Y, Pb = Cb - 128); B = Y' + 2 (1 - Kb) Pb, R = Y' + 2 (1 - Kr) Pr, G = (Y' - Kr R - Kb B) / Kg;
//   alpha 255. Chroma sampled bilinearly at each pixel (the resampling rule below, 2:1).
//   Resampling (crop + scale): each plane on its own grid (luma; chroma (w/2) x h for 4:2:2,
//   (w/2) x (h/2) for 4:2:0); src position of dst sample d = (d + 0.5) * srcSize / dstSize - 0.5,
//   clamped to [0, srcSize - 1], weights from its fraction (bilinear between the 2x2 neighbours).
//   RGB -> 4:2:0 samples R, G, B at each dst pixel, chroma from the mean of each 2x2 block of them.

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

/// A rectangle in (luma) pixels.
struct Region {
  std::uint32_t x = 0, y = 0, width = 0, height = 0;
};

/// The pixels of `region` of `src` as an image of their own (tight pitches); chroma planes cut at
/// region.x / 2 (and region.y / 2 for 4:2:0).
HostImage cropImage(const HostImage& src, const Region& region);

/// Bilinear resampling of all of `src` to dstWidth x dstHeight in `dstFormat` (NV12, I420 or RGBA),
/// rules above; `color` is the RGB <-> YUV matrix and range (of dst for RGB sources, of src for YUV
/// sources). Tight pitches.
HostImage referenceResample(const HostImage& src, PixelFormat dstFormat, std::uint32_t dstWidth,
                            std::uint32_t dstHeight, const ColorDesc& color);

}  // namespace zerohop::test
