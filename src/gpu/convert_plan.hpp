#pragma once
// Internal: the checks of a GpuConverter request and what they decide, with no CUDA call, so that
// GpuConverter::validate() answers on any machine. Also the plane shapes the converter copies.
// Thread-safety: pure functions, reentrant.

#include <cstdint>
#include <string>

#include "zerohop/frame.hpp"
#include "zerohop/gpu_convert.hpp"

namespace zerohop::gpuconvert {

bool isPacked422(PixelFormat f);
bool isRgb(PixelFormat f);
bool is420(PixelFormat f);
bool isRaw(PixelFormat f);

/// Bytes per row and rows of plane `i` of an uncompressed `format` frame of w x h.
struct PlaneShape {
  std::uint32_t widthBytes = 0;
  std::uint32_t rows = 0;
};
PlaneShape planeShape(PixelFormat f, std::uint32_t i, std::uint32_t w, std::uint32_t h);

/// Bytes a plane spans: every row but the last at full pitch, the last row only its pixels.
std::size_t planeSpan(std::uint32_t pitch, const PlaneShape& s);

/// "NV12 1920x1080 device".
std::string frameText(const Frame& f);

/// What a valid request does.
struct ConvertPlan {
  Frame source;           ///< src, or the view of its crop rectangle (plane pointers moved, size reduced)
  bool resample = false;  ///< through the bilinear resampling kernel (scaling, or an RGBA destination)
};

/// Checks `src` -> `dst` with `options` (`allowScale` false: dst must have the source region's size)
/// and returns the plan. Throws Error(kInvalidArgument) with the reason.
ConvertPlan planConversion(const Frame& src, const Frame& dst, const ConvertOptions& options,
                           bool allowScale);

}  // namespace zerohop::gpuconvert
