#pragma once
// Internal, pure logic (no device, no nvJPEG): how one decoded JPEG reaches an NV12 / I420
// destination. nvJPEG writes planar Y, Cb, Cr at the JPEG's own subsampling; luma always goes
// straight into the destination, chroma either too (4:2:0 into I420) or into scratch planes that a
// kernel reduces to 4:2:0 (see gpu_jpeg.hpp for the rounding).
// Thread-safety: reentrant.

#include <cstddef>
#include <cstdint>

#include "zerohop/pixel_format.hpp"

namespace zerohop::jpeg {

/// What the JPEG header says (from nvjpegJpegStreamGet*): frame size, components, size of component 1.
struct Geometry {
  std::uint32_t width = 0;
  std::uint32_t height = 0;
  std::uint32_t components = 0;  ///< 1 (greyscale) or 3 (Y Cb Cr)
  std::uint32_t chromaWidth = 0;
  std::uint32_t chromaHeight = 0;
};

struct ChromaPlan {
  enum class Kind : std::uint8_t {
    kDirect,    ///< 4:2:0 into I420: nvJPEG writes U and V straight into the destination
    kResample,  ///< nvJPEG writes scratch planes; the kernel averages sx x sy samples per output sample
    kGrey,      ///< no chroma in the JPEG: the kernel fills 128
  };
  Kind kind = Kind::kDirect;
  std::uint32_t sx = 1;            ///< chroma samples per output chroma sample, horizontally (1 or 2)
  std::uint32_t sy = 1;            ///< vertically (1 or 2)
  std::uint32_t scratchPitch = 0;  ///< bytes per scratch chroma row (256-aligned); 0 when no scratch
  std::uint32_t scratchRows = 0;
  std::size_t scratchBytes = 0;    ///< both scratch planes together (Cb then Cr at scratchPitch*scratchRows)
};

/// The plan for decoding `g` into a `dst` frame of dstWidth x dstHeight. Throws
/// Error(kInvalidArgument) when sizes differ or are odd, or `dst` is not NV12/I420;
/// Error(kUnsupported) for subsamplings with less than 4:2:0 chroma (4:1:1, 4:1:0) or other
/// component counts, naming the JPEG's geometry.
ChromaPlan planChroma(const Geometry& g, PixelFormat dst, std::uint32_t dstWidth, std::uint32_t dstHeight);

}  // namespace zerohop::jpeg
