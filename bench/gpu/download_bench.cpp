// zerohop_gpu_download_bench: what serve's encode thread pays, per frame, to hand a GPU-path frame to
// the VP8 encode beside NVENC: GpuFramePath::downloadLast() (NV12 in VRAM -> page-locked host memory,
// one cudaMemcpy2DAsync per plane and a stream synchronise), next to the path's own process() (pinned
// YUYV -> NV12 in VRAM) and to process() with hostCopy (the copy x264 gets on every frame).
//
//   zerohop_gpu_download_bench [--iterations N] [--sizes 720p,1080p] [--device N] [--out FILE]
//
// Rows, interleaved frame by frame so drift hits all alike:
//   process            hostCopy off: what every frame costs with NVENC and no VP8 viewer
//   process+download   the same path, then downloadLast(): a frame while a VP8 viewer watches
//   download alone     the downloadLast() call of that row by itself
//   process(hostCopy)  the x264 path: process() with its host copy built in
// Wall = CLOCK_MONOTONIC around the call(s) (each returns with its work complete: process() waits
// for the device frame's ready event here, as the encoder would before reading it); CPU =
// CLOCK_THREAD_CPUTIME_ID of the same calls. Median and p99 of N frames. Plain main: the GPU machine
// has no Google Benchmark.
#include <cuda_runtime_api.h>
#include <time.h>

#include <cstdio>
#include <cstring>
#include <iostream>
#include <sstream>
#include <string>
#include <vector>

#include "bench_stats.hpp"
#include "size_rows_main.hpp"
#include "zerohop/buffer_pool.hpp"
#include "zerohop/error.hpp"
#include "zerohop/gpu.hpp"
#include "gpupath/gpu_path.hpp"

namespace zerohop {
namespace {

void waitReady(const GpuPathOutput& out) {
  if (out.device && out.device->gpu.readyEvent) {
    const cudaError_t rc = cudaEventSynchronize(static_cast<cudaEvent_t>(out.device->gpu.readyEvent));
    if (rc != cudaSuccess) throw Error(Errc::kDevice, std::string("cudaEventSynchronize: ") + cudaGetErrorString(rc));
  }
}

std::string runSize(const bench::FrameSize& size, int device, int iterations) {
  const ImageLayout yuyv = computeLayout(PixelFormat::kYUYV, size.w, size.h);
  BufferPool sources(yuyv, 2, makeIngestAllocator(device));
  auto src = sources.tryAcquire();
  if (!src) throw Error(Errc::kInternal, "no source slot");
  Frame& f = src->frame();
  for (std::uint32_t y = 0; y < size.h; ++y) {  // a moving ramp, so no two frames are alike
    std::memset(f.data[0] + static_cast<std::size_t>(y) * f.pitch[0], static_cast<int>(y & 0xff), f.pitch[0]);
  }
  GpuPathConfig onDemand{device, PixelFormat::kYUYV, size.w, size.h};
  GpuPathConfig withCopy = onDemand;
  withCopy.hostCopy = true;
  GpuFramePath vp8Path(onDemand), x264Path(withCopy);

  bench::Series process, processDownload, download, hostCopy;
  const int warmup = 20;
  for (int i = 0; i < warmup + iterations; ++i) {
    f.sequence = static_cast<std::uint64_t>(i + 1);
    f.data[0][0] = static_cast<std::uint8_t>(i);
    const bool keep = i >= warmup;
    // process alone
    double w0 = bench::nowUs(CLOCK_MONOTONIC), c0 = bench::nowUs(CLOCK_THREAD_CPUTIME_ID);
    waitReady(vp8Path.process(f));
    double w1 = bench::nowUs(CLOCK_MONOTONIC), c1 = bench::nowUs(CLOCK_THREAD_CPUTIME_ID);
    if (keep) process.add(w1 - w0, c1 - c0);
    // process, then the download a VP8 viewer asks for
    w0 = bench::nowUs(CLOCK_MONOTONIC), c0 = bench::nowUs(CLOCK_THREAD_CPUTIME_ID);
    waitReady(vp8Path.process(f));
    const double wMid = bench::nowUs(CLOCK_MONOTONIC), cMid = bench::nowUs(CLOCK_THREAD_CPUTIME_ID);
    const Frame& host = vp8Path.downloadLast();
    w1 = bench::nowUs(CLOCK_MONOTONIC), c1 = bench::nowUs(CLOCK_THREAD_CPUTIME_ID);
    if (host.sequence != f.sequence) throw Error(Errc::kInternal, "downloadLast() returned another frame");
    if (keep) {
      processDownload.add(w1 - w0, c1 - c0);
      download.add(w1 - wMid, c1 - cMid);
    }
    // the x264 path's built-in copy
    w0 = bench::nowUs(CLOCK_MONOTONIC), c0 = bench::nowUs(CLOCK_THREAD_CPUTIME_ID);
    const GpuPathOutput out = x264Path.process(f);
    waitReady(out);
    w1 = bench::nowUs(CLOCK_MONOTONIC), c1 = bench::nowUs(CLOCK_THREAD_CPUTIME_ID);
    if (!out.host) throw Error(Errc::kInternal, "hostCopy path returned no host frame");
    if (keep) hostCopy.add(w1 - w0, c1 - c0);
  }
  const double nv12MB = static_cast<double>(size.w) * size.h * 1.5 / 1e6;
  std::ostringstream o;
  auto row = [&](const char* what, const bench::Series& s) { o << bench::sizeRow(size, what, s); };

  row("process (NVENC, no VP8 viewer)", process);
  row("process + downloadLast (a VP8 viewer watches)", processDownload);
  row("downloadLast alone", download);
  row("process with hostCopy (x264)", hostCopy);
  char line[160];
  std::snprintf(line, sizeof line, "| %s | download of %.2f MB NV12: %.1f GB/s at the median | | |\n", size.name.c_str(),
                nv12MB, nv12MB / 1e3 / (bench::pct(download.wall, 50) / 1e6));
  o << line;
  return o.str();
}

}  // namespace
}  // namespace zerohop

int main(int argc, char** argv) {
  return zerohop::bench::sizeRowsMain(argc, argv, {"GPU path hand-off to a host encoder", zerohop::runSize});
}
