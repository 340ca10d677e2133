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

// The frame a fused read reads: r.base, or the ring slot the doorbell names (null: the ring closed).
// Block 0's first thread reports the slot.
__device__ const std::uint8_t* frameToRead(const FusedRead& r) {
  if (!r.doorbell) return r.base;
  const std::uint32_t slot =
      *reinterpret_cast<const volatile std::uint32_t*>(r.doorbell) & ((1u << kDoorbellSlotBits) - 1);
  if (r.usedSlot && blockIdx.x == 0 && threadIdx.x == 0) *r.usedSlot = slot;
  return slot == kDoorbellClosed ? nullptr : r.base + std::uint64_t{slot} * r.slotStride;
}

// The sum of the (up to) 16 bytes of a row at byte x.
__device__ unsigned long long sumChunk(const std::uint8_t* line, std::uint32_t x, std::uint32_t widthBytes) {
  if (x + 16 <= widthBytes) {
    const uint4 v = reinterpret_cast<const uint4*>(line + x)[0];
    return static_cast<unsigned long long>(v.x) + v.y + v.z + v.w;
  }
  unsigned long long s = 0;
  for (std::uint32_t i = 0; x + i < widthBytes; ++i) s += line[x + i];
  return s;
}

// Block b reads rows b, b + gridDim.x, ... counted over all planes (Y rows, then UV rows).
__global__ void readFused(FusedRead r) {
  const std::uint8_t* frame = frameToRead(r);
  if (!frame) return;
  const std::uint32_t totalRows = r.rows[0] + (r.planeCount > 1 ? r.rows[1] : 0);
  unsigned long long s = 0;
  for (std::uint32_t row = blockIdx.x; row < totalRows; row += gridDim.x) {
    const std::uint32_t p = row < r.rows[0] ? 0 : 1;
    const std::uint32_t y = p == 0 ? row : row - r.rows[0];
    const std::uint8_t* line = frame + r.planeOffset[p] + std::uint64_t{y} * r.pitch[p];
    for (std::uint32_t x = threadIdx.x * 16; x < r.widthBytes[p]; x += blockDim.x * 16)
      s += sumChunk(line, x, r.widthBytes[p]);
  }
  for (int o = 16; o > 0; o /= 2) s += __shfl_down_sync(0xffffffffu, s, o);
  if ((threadIdx.x & 31) == 0 && s) atomicAdd(r.sum, s);
}

// Grid-stride over the 16-byte chunks of every row of every plane (Y rows, then UV rows), a
// block-wide sum, one atomicAdd per block.
__global__ void __launch_bounds__(256) readReduce(FusedRead r) {
  const std::uint8_t* frame = frameToRead(r);
  if (!frame) return;
  const std::uint32_t perRow0 = (r.widthBytes[0] + 15) / 16, perRow1 = (r.widthBytes[1] + 15) / 16;
  const std::uint32_t chunks0 = perRow0 * r.rows[0];
  const std::uint32_t total = chunks0 + (r.planeCount > 1 ? perRow1 * r.rows[1] : 0);
  unsigned long long s = 0;
#pragma unroll 4
  for (std::uint32_t i = blockIdx.x * blockDim.x + threadIdx.x; i < total; i += gridDim.x * blockDim.x) {
    const std::uint32_t p = i < chunks0 ? 0 : 1;
    const std::uint32_t j = p == 0 ? i : i - chunks0, perRow = p == 0 ? perRow0 : perRow1;
    const std::uint32_t y = j / perRow, x = (j - y * perRow) * 16;
    s += sumChunk(frame + r.planeOffset[p] + std::uint64_t{y} * r.pitch[p], x, r.widthBytes[p]);
  }
  __shared__ unsigned long long warpSums[8];
  for (int o = 16; o > 0; o /= 2) s += __shfl_down_sync(0xffffffffu, s, o);
  if ((threadIdx.x & 31) == 0) warpSums[threadIdx.x / 32] = s;
  __syncthreads();
  if (threadIdx.x == 0) {
    unsigned long long block = 0;
    for (unsigned w = 0; w < blockDim.x / 32; ++w) block += warpSums[w];
    if (block) atomicAdd(r.sum, block);
  }
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

void launchReadFused(const FusedRead& read, cudaStream_t stream) {
  if (read.reduce) {
    static const std::uint32_t sms = [] {
      int device = 0, n = 0;
      cuda::check(cudaGetDevice(&device), "cudaGetDevice");
      cuda::check(cudaDeviceGetAttribute(&n, cudaDevAttrMultiProcessorCount, device), "cudaDeviceGetAttribute");
      return static_cast<std::uint32_t>(n);
    }();
    readReduce<<<read.maxBlocks ? read.maxBlocks : 2 * sms, 256, 0, stream>>>(read);
    cuda::checkLaunch("readReduce");
    return;
  }
  const std::uint32_t rows = read.rows[0] + (read.planeCount > 1 ? read.rows[1] : 0);
  const std::uint32_t blocks = read.maxBlocks ? std::min(rows, read.maxBlocks) : rows;
  readFused<<<blocks, 128, 0, stream>>>(read);
  cuda::checkLaunch("readFused");
}

}  // namespace zerohop::bench
