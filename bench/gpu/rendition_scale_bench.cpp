// zerohop_gpu_rendition_scale_bench: what a ladder's lower rungs cost the encode thread to scale on the
// GPU path (docs/ARCHITECTURE.md, "Renditions"), per rung and frame, before each rung's x264:
//   CUDA 1/2, CUDA 1/4   makeCudaScaler: rung 0's NV12 in VRAM -> bilinear resample on the device ->
//                        one copy of the scaled I420 picture into page-locked memory (what serve does)
//   libyuv 1/2, 1/4      the CPU path's scaler on the host copy x264's rung 0 already has (NV12 ->
//                        I420, box filter): the alternative when rung 0 is x264
//   download + libyuv    the full frame's download first (GpuFramePath::downloadLast), then libyuv to
//                        1/2 and 1/4: the alternative when rung 0 is NVENC (no host copy exists)
// Each source frame is made by GpuFramePath (pinned YUYV -> NV12 in VRAM, with x264's host copy), not
// timed; the rows run interleaved frame by frame. Wall = CLOCK_MONOTONIC around the call (it returns
// with the picture in host memory), CPU = CLOCK_THREAD_CPUTIME_ID; median and p99 of N frames.
//
//   zerohop_gpu_rendition_scale_bench [--iterations N] [--sizes 720p,1080p] [--device N] [--out FILE]
//
// Plain main: the GPU machine has no Google Benchmark.
#include <cuda_runtime_api.h>
#include <time.h>

#include <cstdio>
#include <cstring>
#include <iostream>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "bench_stats.hpp"
#include "size_rows_main.hpp"
#include "convert/converter.hpp"
#include "gpupath/cuda_scaler.hpp"
#include "gpupath/gpu_path.hpp"
#include "zerohop/buffer_pool.hpp"
#include "zerohop/error.hpp"
#include "zerohop/gpu.hpp"

namespace zerohop {
namespace {

// Times `call` into `into` when `keep`.
template <class Call>
void timed(bench::Series& into, bool keep, Call call) {
  const double w0 = bench::nowUs(CLOCK_MONOTONIC), c0 = bench::nowUs(CLOCK_THREAD_CPUTIME_ID);
  call();
  const double w1 = bench::nowUs(CLOCK_MONOTONIC), c1 = bench::nowUs(CLOCK_THREAD_CPUTIME_ID);
  if (keep) into.add(w1 - w0, c1 - c0);
}

std::string runSize(const bench::FrameSize& size, int device, int iterations) {
  BufferPool sources(computeLayout(PixelFormat::kYUYV, size.w, size.h), 1, makeIngestAllocator(device));
  auto src = sources.tryAcquire();
  if (!src) throw Error(Errc::kInternal, "no source slot");
  Frame& f = src->frame();
  for (std::uint32_t y = 0; y < size.h; ++y) {
    std::memset(f.data[0] + static_cast<std::size_t>(y) * f.pitch[0], static_cast<int>(y & 0xff), f.pitch[0]);
  }
  GpuPathConfig config{device, PixelFormat::kYUYV, size.w, size.h};
  config.hostCopy = true;
  GpuFramePath path(config);
  GpuPathConfig nvencLike{device, PixelFormat::kYUYV, size.w, size.h};
  GpuFramePath nvencPath(nvencLike);  // no host copy: downloadLast() makes one

  // The rungs' page-locked I420 slots, as RenditionEncodes allocates them on the GPU path.
  auto slot = [&](std::uint32_t div, std::unique_ptr<FrameAllocator> allocator) {
    return BufferPool(computeLayout(PixelFormat::kI420, size.w / div, size.h / div, 64), 1, std::move(allocator));
  };
  BufferPool half = slot(2, makeIngestAllocator(device)), quarter = slot(4, makeIngestAllocator(device));
  auto halfLease = half.tryAcquire(), quarterLease = quarter.tryAcquire();
  auto cuda = makeCudaScaler(device);
  auto cpu = makeCpuScaler();

  bench::Series cudaHalf, cudaQuarter, cpuHalf, cpuQuarter, downloadCpu;
  const int warmup = 20;
  for (int i = 0; i < warmup + iterations; ++i) {
    f.sequence = static_cast<std::uint64_t>(i + 1);
    f.data[0][0] = static_cast<std::uint8_t>(i);
    const bool keep = i >= warmup;
    const GpuPathOutput out = path.process(f);
    if (!out.device || !out.host) throw Error(Errc::kInternal, "the GPU path gave no device frame or host copy");
    timed(cudaHalf, keep, [&] { cuda->scale(*out.device, halfLease->frame()); });
    timed(cudaQuarter, keep, [&] { cuda->scale(*out.device, quarterLease->frame()); });
    timed(cpuHalf, keep, [&] { cpu->scale(*out.host, halfLease->frame()); });
    timed(cpuQuarter, keep, [&] { cpu->scale(*out.host, quarterLease->frame()); });
    const GpuPathOutput alone = nvencPath.process(f);
    if (alone.device && alone.device->gpu.readyEvent) {
      cudaEventSynchronize(static_cast<cudaEvent_t>(alone.device->gpu.readyEvent));
    }
    timed(downloadCpu, keep, [&] {
      const Frame& host = nvencPath.downloadLast();
      cpu->scale(host, halfLease->frame());
      cpu->scale(host, quarterLease->frame());
    });
  }
  std::ostringstream o;
  auto row = [&](const char* what, const bench::Series& s) { o << bench::sizeRow(size, what, s); };

  row("CUDA scale -> 1/2, copied to pinned", cudaHalf);
  row("CUDA scale -> 1/4, copied to pinned", cudaQuarter);
  row("libyuv 1/2 from x264's host copy", cpuHalf);
  row("libyuv 1/4 from x264's host copy", cpuQuarter);
  row("full download + libyuv 1/2 and 1/4 (NVENC rung 0)", downloadCpu);
  return o.str();
}

}  // namespace
}  // namespace zerohop

int main(int argc, char** argv) {
  return zerohop::bench::sizeRowsMain(argc, argv, {"A ladder's lower rungs scaled on the GPU path", zerohop::runSize});
}
