#pragma once
// Internal: the kernel that turns nvJPEG's planar chroma (at the JPEG's subsampling) into the
// 4:2:0 chroma of an NV12 or I420 frame. Each output sample is the mean of sx x sy input samples,
// rounded half up: (sum + n/2) / n. Greyscale (no input) writes 128. Checks the launch.
// Thread-safety: reentrant.

#include <cuda_runtime_api.h>

#include <cstdint>

#include "gpu/kernels.hpp"

namespace zerohop::kernels {

struct JpegChromaIn {
  const std::uint8_t* cb = nullptr;  ///< null: greyscale, write 128
  const std::uint8_t* cr = nullptr;
  std::uint32_t pitch = 0;
  std::uint32_t sx = 1;  ///< 1 or 2
  std::uint32_t sy = 1;  ///< 1 or 2
};

/// Writes the chroma planes of `dst` (NV12: data[1] interleaved UV; I420: data[1] U, data[2] V) of a
/// width x height (even) frame.
void jpegChromaTo420(const JpegChromaIn& in, Out420 out, const PlanesOut& dst, std::uint32_t width,
                     std::uint32_t height, cudaStream_t stream);

}  // namespace zerohop::kernels
