// The resampling kernels: bilinear scaling with pixel centres aligned, fused with the format
// conversion (kernels.hpp, resample()). One thread per RGBA pixel or per 2x2 NV12 / I420 block reads
// the four neighbours of each sample straight from the source planes (any pitch, byte loads) and
// computes in float; the CPU reference (tests/gpu/cpu_reference.cpp) does the same in double.
#include "gpu/cuda_check.hpp"
#include "gpu/kernel_support.cuh"
#include "gpu/kernels.hpp"

namespace zerohop::kernels {
namespace {

using detail::blockGrid;
using detail::clampRound;
using detail::kBlockX;
using detail::kBlockY;

/// One plane grid's mapping: srcSize source samples spread over the destination's samples.
struct Axis {
  float scale;         // srcSize / dstSize
  std::uint32_t size;  // source samples
};
struct Grid {
  Axis x, y;
};
struct Params {
  Grid luma;    // luma (or RGB) plane -> dst pixels
  Grid chroma;  // chroma plane -> dst chroma samples (NV12 / I420: dst chroma grid; RGBA: dst pixels)
  std::uint32_t itemsX, itemsY;  // threads: dst pixels (RGBA) or dst 2x2 blocks (NV12 / I420)
  RgbToYuv toYuv;
  YuvToRgb toRgb;
  bool vec4;  // RGBA destination rows 4-byte aligned: one 4-byte store per pixel
};

struct Tap {
  std::uint32_t i0, i1;
  float f;
};

// The two source samples around dst sample d and the weight of the second.
__device__ __forceinline__ Tap tapAt(std::uint32_t d, const Axis& a) {
  float pos = (static_cast<float>(d) + 0.5f) * a.scale - 0.5f;
  pos = fminf(fmaxf(pos, 0.f), static_cast<float>(a.size - 1));
  const float whole = floorf(pos);
  Tap t;
  t.i0 = static_cast<std::uint32_t>(whole);
  t.i1 = min(t.i0 + 1, a.size - 1);
  t.f = pos - whole;
  return t;
}

__device__ __forceinline__ float lerp(float a, float b, float f) {
  return a + (b - a) * f;
}
__device__ __forceinline__ float2 lerp(float2 a, float2 b, float f) {
  return make_float2(lerp(a.x, b.x, f), lerp(a.y, b.y, f));
}
__device__ __forceinline__ float4 lerp(float4 a, float4 b, float f) {
  return make_float4(lerp(a.x, b.x, f), lerp(a.y, b.y, f), lerp(a.z, b.z, f), lerp(a.w, b.w, f));
}

template <class Fetch>
__device__ __forceinline__ auto bilinear(const Fetch& at, const Tap& tx, const Tap& ty) {
  return lerp(lerp(at(tx.i0, ty.i0), at(tx.i1, ty.i0), tx.f), lerp(at(tx.i0, ty.i1), at(tx.i1, ty.i1), tx.f),
              ty.f);
}

constexpr bool isRgbIn(SampleIn in) {
  return in == SampleIn::kRGB24 || in == SampleIn::kBGRx || in == SampleIn::kRGBA;
}

__device__ __forceinline__ const std::uint8_t* rowOf(const PlanesIn& s, int plane, std::uint32_t y) {
  return s.data[plane] + static_cast<std::size_t>(y) * s.pitch[plane];
}

template <SampleIn kIn>
__device__ __forceinline__ float lumaAt(const PlanesIn& s, std::uint32_t x, std::uint32_t y) {
  const std::uint8_t* row = rowOf(s, 0, y);
  if constexpr (kIn == SampleIn::kYUYV)
    return row[2 * x];
  else if constexpr (kIn == SampleIn::kUYVY)
    return row[2 * x + 1];
  else
    return row[x];
}

// Chroma sample (x, y) of the chroma grid: 4:2:2 = (w/2) x h, 4:2:0 = (w/2) x (h/2).
template <SampleIn kIn>
__device__ __forceinline__ float2 chromaAt(const PlanesIn& s, std::uint32_t x, std::uint32_t y) {
  if constexpr (kIn == SampleIn::kYUYV) {
    const std::uint8_t* p = rowOf(s, 0, y) + 4 * x;
    return make_float2(p[1], p[3]);
  } else if constexpr (kIn == SampleIn::kUYVY) {
    const std::uint8_t* p = rowOf(s, 0, y) + 4 * x;
    return make_float2(p[0], p[2]);
  } else if constexpr (kIn == SampleIn::kNV12) {
    const std::uint8_t* p = rowOf(s, 1, y) + 2 * x;
    return make_float2(p[0], p[1]);
  } else {
    return make_float2(rowOf(s, 1, y)[x], rowOf(s, 2, y)[x]);
  }
}

// R, G, B, A of an RGB source pixel (alpha 255 where the format has none).
template <SampleIn kIn>
__device__ __forceinline__ float4 rgbaAt(const PlanesIn& s, std::uint32_t x, std::uint32_t y) {
  const std::uint8_t* row = rowOf(s, 0, y);
  if constexpr (kIn == SampleIn::kRGB24) {
    const std::uint8_t* p = row + 3 * x;
    return make_float4(p[0], p[1], p[2], 255.f);
  } else if constexpr (kIn == SampleIn::kBGRx) {
    const std::uint8_t* p = row + 4 * x;
    return make_float4(p[2], p[1], p[0], 255.f);
  } else {
    const std::uint8_t* p = row + 4 * x;
    return make_float4(p[0], p[1], p[2], p[3]);
  }
}

template <SampleIn kIn>
__device__ __forceinline__ float lumaSample(const PlanesIn& s, const Params& p, std::uint32_t x,
                                            std::uint32_t y) {
  return bilinear([&](std::uint32_t sx, std::uint32_t sy) { return lumaAt<kIn>(s, sx, sy); },
                  tapAt(x, p.luma.x), tapAt(y, p.luma.y));
}
template <SampleIn kIn>
__device__ __forceinline__ float2 chromaSample(const PlanesIn& s, const Params& p, std::uint32_t x,
                                               std::uint32_t y) {
  return bilinear([&](std::uint32_t sx, std::uint32_t sy) { return chromaAt<kIn>(s, sx, sy); },
                  tapAt(x, p.chroma.x), tapAt(y, p.chroma.y));
}
template <SampleIn kIn>
__device__ __forceinline__ float4 rgbaSample(const PlanesIn& s, const Params& p, std::uint32_t x,
                                             std::uint32_t y) {
  return bilinear([&](std::uint32_t sx, std::uint32_t sy) { return rgbaAt<kIn>(s, sx, sy); },
                  tapAt(x, p.luma.x), tapAt(y, p.luma.y));
}

template <SampleIn kIn, Out420 kOut>
__global__ void resampleTo420Kernel(PlanesIn src, PlanesOut dst, Params p) {
  const std::uint32_t bx = blockIdx.x * blockDim.x + threadIdx.x;
  const std::uint32_t by = blockIdx.y * blockDim.y + threadIdx.y;
  if (bx >= p.itemsX || by >= p.itemsY) return;
  std::uint8_t* y0 = dst.data[0] + static_cast<std::size_t>(2 * by) * dst.pitch[0] + 2 * bx;
  if constexpr (isRgbIn(kIn)) {
    float r = 0, g = 0, b = 0;
#pragma unroll
    for (std::uint32_t k = 0; k < 4; ++k) {
      const float4 c = rgbaSample<kIn>(src, p, 2 * bx + (k & 1), 2 * by + (k >> 1));
      y0[(k >> 1) * dst.pitch[0] + (k & 1)] = detail::lumaOf(p.toYuv, c.x, c.y, c.z);
      r += c.x;
      g += c.y;
      b += c.z;
    }
    r *= 0.25f;
    g *= 0.25f;
    b *= 0.25f;
    detail::storeChroma(kOut, dst, bx, by, detail::cbOf(p.toYuv, r, g, b), detail::crOf(p.toYuv, r, g, b));
  } else {
#pragma unroll
    for (std::uint32_t k = 0; k < 4; ++k) {
      y0[(k >> 1) * dst.pitch[0] + (k & 1)] =
          clampRound(lumaSample<kIn>(src, p, 2 * bx + (k & 1), 2 * by + (k >> 1)));
    }
    const float2 uv = chromaSample<kIn>(src, p, bx, by);
    detail::storeChroma(kOut, dst, bx, by, clampRound(uv.x), clampRound(uv.y));
  }
}

template <SampleIn kIn>
__global__ void resampleToRgbaKernel(PlanesIn src, PlanesOut dst, Params p) {
  const std::uint32_t x = blockIdx.x * blockDim.x + threadIdx.x;
  const std::uint32_t y = blockIdx.y * blockDim.y + threadIdx.y;
  if (x >= p.itemsX || y >= p.itemsY) return;
  uchar4 out;
  if constexpr (isRgbIn(kIn)) {
    const float4 c = rgbaSample<kIn>(src, p, x, y);
    out = make_uchar4(clampRound(c.x), clampRound(c.y), clampRound(c.z), clampRound(c.w));
  } else {
    const YuvToRgb& m = p.toRgb;
    const float luma = (lumaSample<kIn>(src, p, x, y) - m.yOffset) * m.yScale;
    const float2 uv = chromaSample<kIn>(src, p, x, y);
    const float u = uv.x - 128.f, v = uv.y - 128.f;
    out = make_uchar4(clampRound(luma + m.rV * v), clampRound(luma + m.gU * u + m.gV * v),
                      clampRound(luma + m.bU * u), 255);
  }
  std::uint8_t* px = dst.data[0] + static_cast<std::size_t>(y) * dst.pitch[0] + 4 * x;
  if (p.vec4) {
    *reinterpret_cast<uchar4*>(px) = out;
  } else {
    px[0] = out.x;
    px[1] = out.y;
    px[2] = out.z;
    px[3] = out.w;
  }
}

Axis axis(std::uint32_t srcSize, std::uint32_t dstSize) {
  return Axis{static_cast<float>(static_cast<double>(srcSize) / dstSize), srcSize};
}

template <SampleIn kIn>
void launchFrom(SampleOut out, const PlanesIn& src, const PlanesOut& dst, const Params& p,
                cudaStream_t stream) {
  const dim3 block(kBlockX, kBlockY);
  const dim3 grid = blockGrid(p.itemsX, p.itemsY);
  switch (out) {
    case SampleOut::kNV12:
      resampleTo420Kernel<kIn, Out420::kNV12><<<grid, block, 0, stream>>>(src, dst, p);
      break;
    case SampleOut::kI420:
      resampleTo420Kernel<kIn, Out420::kI420><<<grid, block, 0, stream>>>(src, dst, p);
      break;
    case SampleOut::kRGBA:
      resampleToRgbaKernel<kIn><<<grid, block, 0, stream>>>(src, dst, p);
      break;
  }
}

}  // namespace

void resample(SampleIn in, SampleOut out, const PlanesIn& src, const PlanesOut& dst, const ResampleSize& size,
              const RgbToYuv& toYuv, const YuvToRgb& toRgb, cudaStream_t stream) {
  const bool rgbaOut = out == SampleOut::kRGBA;
  Params p{};
  p.luma = Grid{axis(size.srcWidth, size.dstWidth), axis(size.srcHeight, size.dstHeight)};
  if (!isRgbIn(in)) {
    const bool vertical420 = in == SampleIn::kNV12 || in == SampleIn::kI420;
    const std::uint32_t cw = size.srcWidth / 2, ch = vertical420 ? size.srcHeight / 2 : size.srcHeight;
    const std::uint32_t dcw = rgbaOut ? size.dstWidth : size.dstWidth / 2;
    const std::uint32_t dch = rgbaOut ? size.dstHeight : size.dstHeight / 2;
    p.chroma = Grid{axis(cw, dcw), axis(ch, dch)};
  }
  p.itemsX = rgbaOut ? size.dstWidth : size.dstWidth / 2;
  p.itemsY = rgbaOut ? size.dstHeight : size.dstHeight / 2;
  p.toYuv = toYuv;
  p.toRgb = toRgb;
  p.vec4 = detail::alignedTo(dst.data[0], dst.pitch[0], 4);
  switch (in) {
    case SampleIn::kYUYV:
      launchFrom<SampleIn::kYUYV>(out, src, dst, p, stream);
      break;
    case SampleIn::kUYVY:
      launchFrom<SampleIn::kUYVY>(out, src, dst, p, stream);
      break;
    case SampleIn::kNV12:
      launchFrom<SampleIn::kNV12>(out, src, dst, p, stream);
      break;
    case SampleIn::kI420:
      launchFrom<SampleIn::kI420>(out, src, dst, p, stream);
      break;
    case SampleIn::kRGB24:
      launchFrom<SampleIn::kRGB24>(out, src, dst, p, stream);
      break;
    case SampleIn::kBGRx:
      launchFrom<SampleIn::kBGRx>(out, src, dst, p, stream);
      break;
    case SampleIn::kRGBA:
      launchFrom<SampleIn::kRGBA>(out, src, dst, p, stream);
      break;
  }
  cuda::checkLaunch("resample kernel");
}

}  // namespace zerohop::kernels
