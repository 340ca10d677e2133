#include <algorithm>

#include "bench_kernels.hpp"
#include "gpu/cuda_check.hpp"

namespace zerohop::bench {
namespace {

// One thread per 16 bytes of a row (rows of 1080p NV12 are 1920 bytes: 120 threads).
__global__ void writeRows(std::uint8_t* data, std::uint32_t pitch, std::uint32_t widthBytes,
                          std::uint32_t rows, std::uint32_t value) {
  const std::uint32_t x = (blockIdx.x * blockDim.x + threadIdx.x) * 16;
  const std::uint32_t y = blockIdx.y;
  if (x >= widthBytes || y >= rows) return;
  std::uint8_t* p = data + std::size_t{y} * pitch + x;
  if (x + 16 <= widthBytes) {
    reinterpret_cast<uint4*>(p)[0] = make_uint4(value ^ y, value ^ x, value, value + y);
  } else {
    for (std::uint32_t i = 0; x + i < widthBytes; ++i) p[i] = static_cast<std::uint8_t>(value + i);
  }
}

// Block row y reads rows y, y + gridDim.y, ... (one row each when gridDim.y == rows).
__global__ void readRows(const std::uint8_t* data, std::uint32_t pitch, std::uint32_t widthBytes,
                         std::uint32_t rows, unsigned long long* sum) {
  const std::uint32_t x = (blockIdx.x * blockDim.x + threadIdx.x) * 16;
  unsigned long long s = 0;
  for (std::uint32_t y = blockIdx.y; x < widthBytes && y < rows; y += gridDim.y) {
    const std::uint8_t* p = data + std::size_t{y} * pitch + x;
    if (x + 16 <= widthBytes) {
      const uint4 v = reinterpret_cast<const uint4*>(p)[0];
      s += static_cast<unsigned long long>(v.x) + v.y + v.z + v.w;
    } else {
      for (std::uint32_t i = 0; x + i < widthBytes; ++i) s += p[i];
    }
  }
  // Warp reduction, one atomic per warp.
  for (int o = 16; o > 0; o /= 2) s += __shfl_down_sync(0xffffffffu, s, o);
  if ((threadIdx.x & 31) == 0 && s) atomicAdd(sum, s);
}

// Each block spins ~20 us so that the grid spreads over every SM the context may use.
__global__ void markSm(unsigned* seen) {
  unsigned smid;
  asm volatile("mov.u32 %0, %%smid;" : "=r"(smid));
  const long long start = clock64();
  while (clock64() - start < 40000) {
  }
  if (threadIdx.x == 0 && smid < 1024) seen[smid] = 1;
}

}  // namespace

int countSmsUsed(int device) {
  cuda::check(cudaSetDevice(device), "cudaSetDevice");
  int sms = 0;
  cuda::check(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device), "cudaDeviceGetAttribute");
  unsigned* seen = nullptr;
  cuda::check(cudaMalloc(&seen, 1024 * sizeof(unsigned)), "cudaMalloc");
  unsigned host[1024] = {};
  cudaError_t rc = cudaMemset(seen, 0, sizeof host);
  if (rc == cudaSuccess) {
    markSm<<<static_cast<unsigned>(sms) * 64, 32>>>(seen);
    rc = cudaGetLastError();
  }
  if (rc == cudaSuccess) rc = cudaMemcpy(host, seen, sizeof host, cudaMemcpyDeviceToHost);
  cuda::logIfFailed(cudaFree(seen), "cudaFree");
  cuda::check(rc, "countSmsUsed");
  int used = 0;
  for (unsigned v : host) used += v != 0;
  return used;
}

void launchWriteFrame(const PlaneView* planes, std::uint32_t count, std::uint64_t sequence,
                      cudaStream_t stream) {
  for (std::uint32_t p = 0; p < count; ++p) {
    const PlaneView& v = planes[p];
    const std::uint32_t threads = (v.widthBytes + 15) / 16;
    const dim3 block(128), grid((threads + 127) / 128, v.rows);
    writeRows<<<grid, block, 0, stream>>>(v.data, v.pitch, v.widthBytes, v.rows,
                                          static_cast<std::uint32_t>(sequence * 2654435761u));
    cuda::checkLaunch("writeRows");
  }
}

void launchReadFrame(const PlaneView* planes, std::uint32_t count, unsigned long long* sum,
                     cudaStream_t stream, std::uint32_t maxBlocks) {
  for (std::uint32_t p = 0; p < count; ++p) {
    const PlaneView& v = planes[p];
    const std::uint32_t threads = (v.widthBytes + 15) / 16;
    const std::uint32_t xBlocks = (threads + 127) / 128;
    const std::uint32_t yBlocks = maxBlocks ? std::max(1u, std::min(v.rows, maxBlocks / xBlocks)) : v.rows;
    const dim3 block(128), grid(xBlocks, yBlocks);
    readRows<<<grid, block, 0, stream>>>(v.data, v.pitch, v.widthBytes, v.rows, sum);
    cuda::checkLaunch("readRows");
  }
}

}  // namespace zerohop::bench
