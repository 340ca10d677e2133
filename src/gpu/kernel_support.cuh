#pragma once
// Internal, CUDA only: what the conversion kernels (kernels.cu, scale_kernels.cu) share: the launch
// grid, rounding, the RGB -> Y'CbCr formulas and the 4:2:0 chroma store.
// Thread-safety: pure functions.

#include "gpu/kernels.hpp"

namespace zerohop::kernels::detail {

constexpr unsigned kBlockX = 32;
constexpr unsigned kBlockY = 8;

/// Enough kBlockX x kBlockY blocks to give one thread to each of itemsX x itemsY items.
inline dim3 blockGrid(std::uint32_t itemsX, std::uint32_t itemsY) {
  return dim3((itemsX + kBlockX - 1) / kBlockX, (itemsY + kBlockY - 1) / kBlockY);
}

inline bool alignedTo(const void* p, std::uint32_t pitch, std::uint32_t a) {
  return reinterpret_cast<std::uintptr_t>(p) % a == 0 && pitch % a == 0;
}

/// Rounded half up, clamped to 0..255.
__device__ __forceinline__ std::uint8_t clampRound(float v) {
  v = floorf(v + 0.5f);
  return static_cast<std::uint8_t>(fminf(fmaxf(v, 0.f), 255.f));
}

__device__ __forceinline__ std::uint8_t lumaOf(const RgbToYuv& c, float r, float g, float b) {
  return clampRound(c.yOffset + c.yR * r + c.yG * g + c.yB * b);
}
__device__ __forceinline__ std::uint8_t cbOf(const RgbToYuv& c, float r, float g, float b) {
  return clampRound(128.f + c.uR * r + c.uG * g + c.uB * b);
}
__device__ __forceinline__ std::uint8_t crOf(const RgbToYuv& c, float r, float g, float b) {
  return clampRound(128.f + c.vR * r + c.vG * g + c.vB * b);
}

/// Writes the chroma pair of 2x2 block (bx, by) into an NV12 or I420 destination.
__device__ __forceinline__ void storeChroma(Out420 out, const PlanesOut& dst, std::uint32_t bx,
                                            std::uint32_t by, std::uint8_t u, std::uint8_t v) {
  if (out == Out420::kNV12) {
    std::uint8_t* uv = dst.data[1] + static_cast<std::size_t>(by) * dst.pitch[1] + 2 * bx;
    uv[0] = u;
    uv[1] = v;
  } else {
    dst.data[1][static_cast<std::size_t>(by) * dst.pitch[1] + bx] = u;
    dst.data[2][static_cast<std::size_t>(by) * dst.pitch[2] + bx] = v;
  }
}

}  // namespace zerohop::kernels::detail
