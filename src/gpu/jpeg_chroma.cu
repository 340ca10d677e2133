#include "gpu/cuda_check.hpp"
#include "gpu/jpeg_chroma.hpp"

namespace zerohop::kernels {
namespace {

template <int SX, int SY>
__device__ __forceinline__ unsigned meanOf(const std::uint8_t* plane, std::uint32_t pitch, std::uint32_t x,
                                           std::uint32_t y) {
  unsigned sum = 0;
  const std::uint8_t* p = plane + std::size_t(y * SY) * pitch + x * SX;
#pragma unroll
  for (int j = 0; j < SY; ++j)
#pragma unroll
    for (int i = 0; i < SX; ++i) sum += p[std::size_t(j) * pitch + i];
  constexpr unsigned n = SX * SY;
  return (sum + n / 2) / n;
}

template <int SX, int SY>
__global__ void chromaKernel(JpegChromaIn in, Out420 out, PlanesOut dst, std::uint32_t cw, std::uint32_t ch) {
  const std::uint32_t x = blockIdx.x * blockDim.x + threadIdx.x;
  const std::uint32_t y = blockIdx.y * blockDim.y + threadIdx.y;
  if (x >= cw || y >= ch) return;
  unsigned u = 128, v = 128;
  if (in.cb) {
    u = meanOf<SX, SY>(in.cb, in.pitch, x, y);
    v = meanOf<SX, SY>(in.cr, in.pitch, x, y);
  }
  if (out == Out420::kNV12) {
    std::uint8_t* row = dst.data[1] + std::size_t(y) * dst.pitch[1];
    row[2 * x] = static_cast<std::uint8_t>(u);
    row[2 * x + 1] = static_cast<std::uint8_t>(v);
  } else {
    dst.data[1][std::size_t(y) * dst.pitch[1] + x] = static_cast<std::uint8_t>(u);
    dst.data[2][std::size_t(y) * dst.pitch[2] + x] = static_cast<std::uint8_t>(v);
  }
}

}  // namespace

void jpegChromaTo420(const JpegChromaIn& in, Out420 out, const PlanesOut& dst, std::uint32_t width,
                     std::uint32_t height, cudaStream_t stream) {
  const std::uint32_t cw = width / 2, ch = height / 2;
  const dim3 block(32, 8);
  const dim3 grid((cw + block.x - 1) / block.x, (ch + block.y - 1) / block.y);
  const unsigned key = in.sx * 4 + in.sy;
  switch (key) {
    case 1 * 4 + 1: chromaKernel<1, 1><<<grid, block, 0, stream>>>(in, out, dst, cw, ch); break;
    case 1 * 4 + 2: chromaKernel<1, 2><<<grid, block, 0, stream>>>(in, out, dst, cw, ch); break;
    case 2 * 4 + 1: chromaKernel<2, 1><<<grid, block, 0, stream>>>(in, out, dst, cw, ch); break;
    default: chromaKernel<2, 2><<<grid, block, 0, stream>>>(in, out, dst, cw, ch); break;
  }
  cuda::checkLaunch("jpegChromaTo420");
}

}  // namespace zerohop::kernels
