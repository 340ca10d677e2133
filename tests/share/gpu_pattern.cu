#include "gpu/cuda_check.hpp"
#include "gpu_pattern_kernels.hpp"

namespace zerohop::share_test {
namespace {

// The same bytes as share_test::patternByte (share_test_support.hpp).
__device__ __forceinline__ std::uint8_t patternAt(std::uint64_t seq, std::uint32_t plane,
                                                  std::uint64_t offset) {
  return static_cast<std::uint8_t>((seq * 7 + plane * 101 + offset * 13 + (offset >> 9)) & 0xFF);
}

__global__ void fillKernel(PlaneView v, std::uint32_t plane, std::uint64_t seq) {
  const std::uint32_t x = blockIdx.x * blockDim.x + threadIdx.x;
  const std::uint32_t y = blockIdx.y * blockDim.y + threadIdx.y;
  if (x >= v.widthBytes || y >= v.rows) return;
  v.data[std::size_t{y} * v.pitch + x] = patternAt(seq, plane, std::uint64_t{y} * v.widthBytes + x);
}

__global__ void checkKernel(PlaneView v, std::uint32_t plane, std::uint64_t seq, std::uint32_t* bad) {
  const std::uint32_t x = blockIdx.x * blockDim.x + threadIdx.x;
  const std::uint32_t y = blockIdx.y * blockDim.y + threadIdx.y;
  if (x >= v.widthBytes || y >= v.rows) return;
  if (v.data[std::size_t{y} * v.pitch + x] != patternAt(seq, plane, std::uint64_t{y} * v.widthBytes + x))
    atomicAdd(bad, 1u);
}

dim3 gridFor(const PlaneView& v, dim3 block) {
  return dim3((v.widthBytes + block.x - 1) / block.x, (v.rows + block.y - 1) / block.y);
}

}  // namespace

void launchFillPlanes(const PlaneView* planes, std::uint32_t count, std::uint64_t sequence,
                      cudaStream_t stream) {
  const dim3 block(128, 4);
  for (std::uint32_t p = 0; p < count; ++p) {
    fillKernel<<<gridFor(planes[p], block), block, 0, stream>>>(planes[p], p, sequence);
    cuda::checkLaunch("fillKernel");
  }
}

void launchCheckPlanes(const PlaneView* planes, std::uint32_t count, std::uint64_t sequence,
                       std::uint32_t* bad, cudaStream_t stream) {
  const dim3 block(128, 4);
  for (std::uint32_t p = 0; p < count; ++p) {
    checkKernel<<<gridFor(planes[p], block), block, 0, stream>>>(planes[p], p, sequence, bad);
    cuda::checkLaunch("checkKernel");
  }
}

}  // namespace zerohop::share_test
