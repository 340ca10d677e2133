// Colour-conversion kernels. One thread per 2x2 pixel block for the 4:2:0 outputs: it reads the
// block's two source rows once and writes four luma bytes and one chroma pair. Loads are 4-byte
// vectors when every row start is 4-byte aligned (a uniform branch), bytes otherwise, so any pitch works.
// The 4:2:2 kernels also come in a signalled variant (IngestSignal): they may start before the source
// has landed, and each block waits on the GPU for its rows' band.
#include "gpu/cuda_check.hpp"
#include "gpu/kernel_support.cuh"
#include "gpu/kernels.hpp"

namespace zerohop::kernels {
namespace {

using detail::alignedTo;
using detail::blockGrid;
using detail::kBlockX;
using detail::kBlockY;
using detail::storeChroma;

bool aligned4(const void* p, std::uint32_t pitch) {
  return (reinterpret_cast<std::uintptr_t>(p) % 4 == 0) && (pitch % 4 == 0);
}

__device__ __forceinline__ uchar4 load4(const std::uint8_t* p, bool vec) {
  if (vec) return *reinterpret_cast<const uchar4*>(p);
  return make_uchar4(p[0], p[1], p[2], p[3]);
}

__device__ __forceinline__ std::uint8_t avg2(unsigned a, unsigned b) {
  return static_cast<std::uint8_t>((a + b + 1) >> 1);
}

__device__ __forceinline__ std::uint64_t globalTimerNs() {
  std::uint64_t t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  return t;
}

// A load with acquire semantics at GPU scope: the block's later loads see what was written before
// the flag (and never stale L1 lines).
__device__ __forceinline__ std::uint32_t loadAcquire(const std::uint32_t* p) {
  std::uint32_t v;
  asm volatile("ld.acquire.gpu.u32 %0, [%1];" : "=r"(v) : "l"(p) : "memory");
  return v;
}

// Signalled ingest: true once the band holding source rows up to `lastRow` has landed; false after
// kSignalTimeoutNs (the ticket is written to signal.error). One thread polls, the block waits at the
// barrier; called by every thread of the block before any of them returns.
__device__ bool awaitRows(const IngestSignal& signal, std::uint32_t lastRow) {
  __shared__ int landed;
  if (threadIdx.x == 0 && threadIdx.y == 0) {
    const std::uint32_t ticket = signal.firstTicket + lastRow / signal.bandRows;
    const std::uint64_t start = globalTimerNs();
    unsigned sleepNs = 32;
    int ok = 1;
    while (static_cast<std::int32_t>(loadAcquire(signal.flag) - ticket) < 0) {
      if (globalTimerNs() - start > kSignalTimeoutNs) {
        *reinterpret_cast<volatile std::uint32_t*>(signal.error) = ticket;
        __threadfence_system();
        ok = 0;
        break;
      }
      __nanosleep(sleepNs);
      sleepNs = sleepNs < 256 ? 2 * sleepNs : 256;
    }
    landed = ok;
  }
  __syncthreads();
  return landed != 0;
}

// The last source row a block of 2-row items reads (blocksY items in y over the whole frame).
__device__ __forceinline__ std::uint32_t lastSourceRow(std::uint32_t blocksY) {
  const std::uint32_t end = (blockIdx.y + 1) * blockDim.y;
  return 2 * (end < blocksY ? end : blocksY) - 1;
}

template <Packed422 kIn, Out420 kOut, bool kSignalled>
__global__ void packed422To420Kernel(PlanesIn src, PlanesOut dst, std::uint32_t blocksX, std::uint32_t blocksY,
                                     bool vec, IngestSignal signal) {
  if constexpr (kSignalled) {
    if (!awaitRows(signal, lastSourceRow(blocksY))) return;
  }
  const std::uint32_t bx = blockIdx.x * blockDim.x + threadIdx.x;
  const std::uint32_t by = blockIdx.y * blockDim.y + threadIdx.y;
  if (bx >= blocksX || by >= blocksY) return;
  const std::uint8_t* row0 = src.data[0] + static_cast<std::size_t>(2 * by) * src.pitch[0] + 4 * bx;
  const uchar4 a = load4(row0, vec);
  const uchar4 b = load4(row0 + src.pitch[0], vec);
  // YUYV: Y0 U Y1 V; UYVY: U Y0 V Y1.
  const std::uint8_t ay0 = kIn == Packed422::kYUYV ? a.x : a.y, ay1 = kIn == Packed422::kYUYV ? a.z : a.w;
  const std::uint8_t by0 = kIn == Packed422::kYUYV ? b.x : b.y, by1 = kIn == Packed422::kYUYV ? b.z : b.w;
  const std::uint8_t au = kIn == Packed422::kYUYV ? a.y : a.x, av = kIn == Packed422::kYUYV ? a.w : a.z;
  const std::uint8_t bu = kIn == Packed422::kYUYV ? b.y : b.x, bv = kIn == Packed422::kYUYV ? b.w : b.z;
  std::uint8_t* y0 = dst.data[0] + static_cast<std::size_t>(2 * by) * dst.pitch[0] + 2 * bx;
  y0[0] = ay0;
  y0[1] = ay1;
  y0[dst.pitch[0]] = by0;
  y0[dst.pitch[0] + 1] = by1;
  storeChroma(kOut, dst, bx, by, avg2(au, bu), avg2(av, bv));
}

// The wide variant: one thread per 8x2 pixel block, 16-byte loads from each source row, 8-byte
// luma stores and 8-byte (NV12) or 4-byte (I420) chroma stores. Fewer, larger memory transactions:
// better for VRAM and much better for zero-copy reads over PCIe. Needs width % 8 == 0 and the
// alignment checked by wideOk().
__device__ __forceinline__ std::uint32_t byteOf(std::uint32_t w, int i) { return (w >> (8 * i)) & 0xFFu; }

template <Packed422 kIn, Out420 kOut, bool kSignalled>
__global__ void packed422To420WideKernel(PlanesIn src, PlanesOut dst, std::uint32_t groupsX, std::uint32_t blocksY,
                                         IngestSignal signal) {
  if constexpr (kSignalled) {
    if (!awaitRows(signal, lastSourceRow(blocksY))) return;
  }
  const std::uint32_t gx = blockIdx.x * blockDim.x + threadIdx.x;
  const std::uint32_t by = blockIdx.y * blockDim.y + threadIdx.y;
  if (gx >= groupsX || by >= blocksY) return;
  const std::uint8_t* row0 = src.data[0] + static_cast<std::size_t>(2 * by) * src.pitch[0] + 16 * gx;
  const uint4 a = *reinterpret_cast<const uint4*>(row0);
  const uint4 b = *reinterpret_cast<const uint4*>(row0 + src.pitch[0]);
  const std::uint32_t wa[4] = {a.x, a.y, a.z, a.w};
  const std::uint32_t wb[4] = {b.x, b.y, b.z, b.w};
  // Byte positions inside each 4-byte word (2 pixels): YUYV = Y0 U Y1 V, UYVY = U Y0 V Y1.
  constexpr int kY0 = kIn == Packed422::kYUYV ? 0 : 1, kY1 = kIn == Packed422::kYUYV ? 2 : 3;
  constexpr int kU = kIn == Packed422::kYUYV ? 1 : 0, kV = kIn == Packed422::kYUYV ? 3 : 2;
  std::uint32_t ya[2] = {0, 0}, yb[2] = {0, 0}, u = 0, v = 0;
#pragma unroll
  for (int k = 0; k < 4; ++k) {
    const int shift = 16 * (k % 2);  // two words (4 luma bytes) per 32-bit luma word
    ya[k / 2] |= (byteOf(wa[k], kY0) | (byteOf(wa[k], kY1) << 8)) << shift;
    yb[k / 2] |= (byteOf(wb[k], kY0) | (byteOf(wb[k], kY1) << 8)) << shift;
    u |= ((byteOf(wa[k], kU) + byteOf(wb[k], kU) + 1) >> 1) << (8 * k);
    v |= ((byteOf(wa[k], kV) + byteOf(wb[k], kV) + 1) >> 1) << (8 * k);
  }
  std::uint8_t* y0 = dst.data[0] + static_cast<std::size_t>(2 * by) * dst.pitch[0] + 8 * gx;
  *reinterpret_cast<uint2*>(y0) = make_uint2(ya[0], ya[1]);
  *reinterpret_cast<uint2*>(y0 + dst.pitch[0]) = make_uint2(yb[0], yb[1]);
  if constexpr (kOut == Out420::kNV12) {
    // u = u0 u1 u2 u3, v = v0 v1 v2 v3 (low byte first) -> u0 v0 u1 v1 | u2 v2 u3 v3
    const std::uint32_t lo = __byte_perm(u, v, 0x5140);
    const std::uint32_t hi = __byte_perm(u, v, 0x7362);
    *reinterpret_cast<uint2*>(dst.data[1] + static_cast<std::size_t>(by) * dst.pitch[1] + 8 * gx) = make_uint2(lo, hi);
  } else {
    *reinterpret_cast<std::uint32_t*>(dst.data[1] + static_cast<std::size_t>(by) * dst.pitch[1] + 4 * gx) = u;
    *reinterpret_cast<std::uint32_t*>(dst.data[2] + static_cast<std::size_t>(by) * dst.pitch[2] + 4 * gx) = v;
  }
}

bool wideOk(Out420 out, const PlanesIn& src, const PlanesOut& dst, std::uint32_t width) {
  if (width % 8 != 0) return false;
  if (!alignedTo(src.data[0], src.pitch[0], 16) || !alignedTo(dst.data[0], dst.pitch[0], 8)) return false;
  if (out == Out420::kNV12) return alignedTo(dst.data[1], dst.pitch[1], 8);
  return alignedTo(dst.data[1], dst.pitch[1], 4) && alignedTo(dst.data[2], dst.pitch[2], 4);
}

template <RgbLayout kIn>
__device__ __forceinline__ float3 loadRgb(const std::uint8_t* row, std::uint32_t x) {
  if constexpr (kIn == RgbLayout::kRGB24) {
    const std::uint8_t* p = row + 3 * x;
    return make_float3(p[0], p[1], p[2]);
  } else if constexpr (kIn == RgbLayout::kBGRx) {
    const std::uint8_t* p = row + 4 * x;
    return make_float3(p[2], p[1], p[0]);
  } else {
    const std::uint8_t* p = row + 4 * x;
    return make_float3(p[0], p[1], p[2]);
  }
}

__device__ __forceinline__ std::uint8_t lumaOf(const RgbToYuv& c, float3 p) {
  return detail::lumaOf(c, p.x, p.y, p.z);
}

template <RgbLayout kIn, Out420 kOut>
__global__ void rgbTo420Kernel(PlanesIn src, PlanesOut dst, std::uint32_t blocksX, std::uint32_t blocksY,
                               RgbToYuv c) {
  const std::uint32_t bx = blockIdx.x * blockDim.x + threadIdx.x;
  const std::uint32_t by = blockIdx.y * blockDim.y + threadIdx.y;
  if (bx >= blocksX || by >= blocksY) return;
  const std::uint8_t* row0 = src.data[0] + static_cast<std::size_t>(2 * by) * src.pitch[0];
  const std::uint8_t* row1 = row0 + src.pitch[0];
  const float3 p00 = loadRgb<kIn>(row0, 2 * bx), p01 = loadRgb<kIn>(row0, 2 * bx + 1);
  const float3 p10 = loadRgb<kIn>(row1, 2 * bx), p11 = loadRgb<kIn>(row1, 2 * bx + 1);
  std::uint8_t* y0 = dst.data[0] + static_cast<std::size_t>(2 * by) * dst.pitch[0] + 2 * bx;
  y0[0] = lumaOf(c, p00);
  y0[1] = lumaOf(c, p01);
  y0[dst.pitch[0]] = lumaOf(c, p10);
  y0[dst.pitch[0] + 1] = lumaOf(c, p11);
  const float r = 0.25f * (p00.x + p01.x + p10.x + p11.x);
  const float g = 0.25f * (p00.y + p01.y + p10.y + p11.y);
  const float b = 0.25f * (p00.z + p01.z + p10.z + p11.z);
  storeChroma(kOut, dst, bx, by, detail::cbOf(c, r, g, b), detail::crOf(c, r, g, b));
}

__global__ void nv12ChromaToI420Kernel(PlanesIn src, PlanesOut dst, std::uint32_t cw, std::uint32_t ch) {
  const std::uint32_t x = blockIdx.x * blockDim.x + threadIdx.x;
  const std::uint32_t y = blockIdx.y * blockDim.y + threadIdx.y;
  if (x >= cw || y >= ch) return;
  const std::uint8_t* uv = src.data[1] + static_cast<std::size_t>(y) * src.pitch[1] + 2 * x;
  dst.data[1][static_cast<std::size_t>(y) * dst.pitch[1] + x] = uv[0];
  dst.data[2][static_cast<std::size_t>(y) * dst.pitch[2] + x] = uv[1];
}

__global__ void i420ChromaToNv12Kernel(PlanesIn src, PlanesOut dst, std::uint32_t cw, std::uint32_t ch) {
  const std::uint32_t x = blockIdx.x * blockDim.x + threadIdx.x;
  const std::uint32_t y = blockIdx.y * blockDim.y + threadIdx.y;
  if (x >= cw || y >= ch) return;
  std::uint8_t* uv = dst.data[1] + static_cast<std::size_t>(y) * dst.pitch[1] + 2 * x;
  uv[0] = src.data[1][static_cast<std::size_t>(y) * src.pitch[1] + x];
  uv[1] = src.data[2][static_cast<std::size_t>(y) * src.pitch[2] + x];
}

template <Packed422 kIn, bool kSignalled>
void launchPacked(Out420 out, const PlanesIn& src, const PlanesOut& dst, std::uint32_t bxs, std::uint32_t bys,
                  bool vec, const IngestSignal& signal, cudaStream_t stream) {
  const dim3 block(kBlockX, kBlockY);
  if (wideOk(out, src, dst, 2 * bxs)) {
    const std::uint32_t groups = bxs / 4;
    if (out == Out420::kNV12) {
      packed422To420WideKernel<kIn, Out420::kNV12, kSignalled>
          <<<blockGrid(groups, bys), block, 0, stream>>>(src, dst, groups, bys, signal);
    } else {
      packed422To420WideKernel<kIn, Out420::kI420, kSignalled>
          <<<blockGrid(groups, bys), block, 0, stream>>>(src, dst, groups, bys, signal);
    }
    return;
  }
  if (out == Out420::kNV12) {
    packed422To420Kernel<kIn, Out420::kNV12, kSignalled>
        <<<blockGrid(bxs, bys), block, 0, stream>>>(src, dst, bxs, bys, vec, signal);
  } else {
    packed422To420Kernel<kIn, Out420::kI420, kSignalled>
        <<<blockGrid(bxs, bys), block, 0, stream>>>(src, dst, bxs, bys, vec, signal);
  }
}

template <Packed422 kIn>
void launchPacked(Out420 out, const PlanesIn& src, const PlanesOut& dst, std::uint32_t bxs, std::uint32_t bys,
                  bool vec, const IngestSignal* signal, cudaStream_t stream) {
  if (signal) {
    launchPacked<kIn, true>(out, src, dst, bxs, bys, vec, *signal, stream);
  } else {
    launchPacked<kIn, false>(out, src, dst, bxs, bys, vec, IngestSignal{}, stream);
  }
}

template <RgbLayout kIn>
void launchRgb(Out420 out, const PlanesIn& src, const PlanesOut& dst, std::uint32_t bxs, std::uint32_t bys,
               const RgbToYuv& c, cudaStream_t stream) {
  const dim3 block(kBlockX, kBlockY);
  if (out == Out420::kNV12) {
    rgbTo420Kernel<kIn, Out420::kNV12><<<blockGrid(bxs, bys), block, 0, stream>>>(src, dst, bxs, bys, c);
  } else {
    rgbTo420Kernel<kIn, Out420::kI420><<<blockGrid(bxs, bys), block, 0, stream>>>(src, dst, bxs, bys, c);
  }
}

}  // namespace

void packed422To420(Packed422 in, Out420 out, const PlanesIn& src, const PlanesOut& dst, std::uint32_t width,
                    std::uint32_t height, cudaStream_t stream, const IngestSignal* signal) {
  const bool vec = aligned4(src.data[0], src.pitch[0]);
  if (in == Packed422::kYUYV) {
    launchPacked<Packed422::kYUYV>(out, src, dst, width / 2, height / 2, vec, signal, stream);
  } else {
    launchPacked<Packed422::kUYVY>(out, src, dst, width / 2, height / 2, vec, signal, stream);
  }
  cuda::checkLaunch(in == Packed422::kYUYV ? "yuyvTo420 kernel" : "uyvyTo420 kernel");
}

void rgbTo420(RgbLayout in, Out420 out, const PlanesIn& src, const PlanesOut& dst, std::uint32_t width,
              std::uint32_t height, const RgbToYuv& coeffs, cudaStream_t stream) {
  switch (in) {
    case RgbLayout::kRGB24: launchRgb<RgbLayout::kRGB24>(out, src, dst, width / 2, height / 2, coeffs, stream); break;
    case RgbLayout::kBGRx: launchRgb<RgbLayout::kBGRx>(out, src, dst, width / 2, height / 2, coeffs, stream); break;
    case RgbLayout::kRGBA: launchRgb<RgbLayout::kRGBA>(out, src, dst, width / 2, height / 2, coeffs, stream); break;
  }
  cuda::checkLaunch("rgbTo420 kernel");
}

void nv12ChromaToI420(const PlanesIn& src, const PlanesOut& dst, std::uint32_t width, std::uint32_t height,
                      cudaStream_t stream) {
  nv12ChromaToI420Kernel<<<blockGrid(width / 2, height / 2), dim3(kBlockX, kBlockY), 0, stream>>>(
      src, dst, width / 2, height / 2);
  cuda::checkLaunch("nv12ChromaToI420 kernel");
}

void i420ChromaToNv12(const PlanesIn& src, const PlanesOut& dst, std::uint32_t width, std::uint32_t height,
                      cudaStream_t stream) {
  i420ChromaToNv12Kernel<<<blockGrid(width / 2, height / 2), dim3(kBlockX, kBlockY), 0, stream>>>(
      src, dst, width / 2, height / 2);
  cuda::checkLaunch("i420ChromaToNv12 kernel");
}

}  // namespace zerohop::kernels
