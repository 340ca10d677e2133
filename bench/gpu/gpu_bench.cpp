// zerohop_gpu_bench: how long one camera frame takes to become NV12 in VRAM, by ingest path.
//
//   zerohop_gpu_bench [--iterations N] [--warmup N] [--sizes 720p,1080p,4k] [--device N] [--out FILE]
//   zerohop_gpu_bench --probe      prints the probe line; exit 0 with a usable GPU, 2 without
//
// Paths, all through GpuConverter (YUYV -> NV12) on the converter's own stream (as src/gpupath runs
// it), interleaved frame by frame so drift hits all alike:
//   (a) pageable  host malloc memory, cudaMemcpyAsync from pageable + kernel (what hwupload_cuda does)
//   (b) pinned    cudaHostAlloc memory, one cudaMemcpyAsync (DMA) + kernel
//   (r) mmap-reg  malloc memory registered once with cudaHostRegister (a V4L2 MMAP buffer), DMA + kernel
//   (c) zero-copy the kernel reads mapped pinned memory over PCIe
//   (p) pipelined pinned memory copied in 4 (p8: 8) row bands on a second stream, each band
//                 converted as soon as it has landed (IngestMode::kPipelinedCopy)
//   (s) signalled pinned memory copied on a second stream, then a flag word set; the kernel runs with
//                 no stream dependency on the copy and its blocks wait for the flag on the GPU
//                 (IngestMode::kSignalledCopy, 1 band; s2: 2 bands)
//   (d) floor     the same bytes' pinned cudaMemcpyAsync alone, no kernel
//   (e) on-device the kernel on a frame already in VRAM
// Diagnostics (second summary table), on the benchmark's stream:
//   (bx)  (b) on a caller's stream: convert(src, dst, stream) then also waits (on the GPU) for the
//         previous frame's kernel to have left the staging buffer, one more CUDA call per frame
//   (bk)  the raw cudaMemcpyAsync + kernel launch, no GpuConverter (no validation, no events)
//   (ck)  the raw zero-copy kernel launch on the mapped pointer resolved once, no GpuConverter
//   (gk)  (bk) captured once per slot into a CUDA graph, one cudaGraphLaunch per frame
//   (g2k) the same in 2 row bands: copy 1 -> kernel 1 in parallel with copy 2 -> kernel 2, one launch
//   (sk)  (s) without GpuConverter: cudaMemcpyAsync + flag on a side stream, the signalled kernel on
//         the benchmark's stream, no event between them (the converter adds "ready after the copy")
//   (sc)  (sk) with the flag set by a 4-byte cudaMemcpyAsync instead of cuStreamWriteValue32
//   (skr) (sk) plus two event records after the kernel (what the converter adds on the GPU after the
//         kernel: the destination's ready event and the staging buffer's "released" event)
// Then the host cost of the CUDA calls the converter can make before a copy (mean of 2000 calls).
// Then, at 1080p only: YUYV -> RGBA and NV12 1080p -> 720p (bilinear scale), pinned copy + kernel and
// kernel alone (resampleRows).
// Latency = CUDA events recorded on the stream right before and after the path (median, p99 of N
// frames); wall = host clock from enqueue to the end event's completion seen by the host; CPU =
// CLOCK_THREAD_CPUTIME_ID of the enqueue (convert() call) alone and of enqueue + wait (spin-wait).
#include <cuda_runtime_api.h>
#include <time.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <functional>
#include <iostream>
#include <sstream>
#include <string>
#include <vector>

#include "bench_stats.hpp"
#include "gpu/cuda_check.hpp"
#include "gpu/cuda_handles.hpp"
#include "gpu/kernels.hpp"
#include "zerohop/buffer_pool.hpp"
#include "zerohop/error.hpp"
#include "zerohop/gpu.hpp"
#include "zerohop/gpu_convert.hpp"

namespace zerohop {
namespace {

using bench::fmt;
using bench::nowUs;
using bench::pct;

struct Options {
  int iterations = 500;
  int warmup = 50;
  int device = 0;
  std::vector<std::string> sizes = {"720p", "1080p", "4k"};
  std::string out;
  bool probeOnly = false;
};

struct Size {
  std::string name;
  std::uint32_t w, h;
};

struct Series {
  std::vector<double> gpu, wall, cpuEnqueue, cpuTotal;
};

// Camera-like bytes (never zeros): a gradient with xorshift noise.
void fillFrame(std::uint8_t* p, std::size_t bytes, std::uint32_t seed) {
  std::uint32_t x = seed * 2654435761u + 1;
  for (std::size_t i = 0; i < bytes; ++i) {
    x ^= x << 13;
    x ^= x >> 17;
    x ^= x << 5;
    p[i] = static_cast<std::uint8_t>(((i / 7) & 0xC0) + (x & 0x3F) + 16);
  }
}

struct Path {
  std::string key;
  std::string name;
  std::function<void(int slot, cudaStream_t s)> run;  // enqueues one frame's work
  Series series;
  cudaStream_t stream = nullptr;  // where it runs and is timed; null = the benchmark's stream
};

// Runs every path once per iteration, interleaved, each between two CUDA events on its stream.
void measure(std::vector<Path>& paths, const Options& opt, int dev, int slots) {
  CudaStream stream(dev);
  CudaEvent start(dev, true), end(dev, true);
  for (int it = 0; it < opt.warmup + opt.iterations; ++it) {
    const int slot = it % slots;
    for (auto& p : paths) {
      const cudaStream_t s = p.stream ? p.stream : stream.get();
      const double w0 = nowUs(CLOCK_MONOTONIC);
      const double c0 = nowUs(CLOCK_THREAD_CPUTIME_ID);
      start.record(s);
      p.run(slot, s);
      end.record(s);
      const double c1 = nowUs(CLOCK_THREAD_CPUTIME_ID);
      end.synchronize();
      const double w1 = nowUs(CLOCK_MONOTONIC);
      const double c2 = nowUs(CLOCK_THREAD_CPUTIME_ID);
      if (it < opt.warmup) continue;
      p.series.gpu.push_back(static_cast<double>(end.elapsedMsSince(start)) * 1000.0);
      p.series.wall.push_back(w1 - w0);
      p.series.cpuEnqueue.push_back(c1 - c0);
      p.series.cpuTotal.push_back(c2 - c0);
    }
  }
}

// RGBA output and scaling (GpuConverter with ConvertOptions): 1080p YUYV -> RGBA and NV12 1080p ->
// 720p, from pinned memory (copy + kernel) and already in VRAM (the kernel alone).
std::string resampleRows(const Options& opt) {
  const int dev = opt.device;
  constexpr int kSlots = 3;
  const ImageLayout yuyv = computeLayout(PixelFormat::kYUYV, 1920, 1080, 64);
  const ImageLayout rgba = computeLayout(PixelFormat::kRGBA, 1920, 1080, 64);
  const ImageLayout nv12 = computeLayout(PixelFormat::kNV12, 1920, 1080, 64);
  const ImageLayout nv12Small = computeLayout(PixelFormat::kNV12, 1280, 720, 64);
  BufferPool yuyvPinned(yuyv, kSlots, makePinnedAllocator(dev));
  BufferPool yuyvDev(yuyv, kSlots, makeDeviceAllocator(dev));
  BufferPool nv12Pinned(nv12, kSlots, makePinnedAllocator(dev));
  BufferPool nv12Dev(nv12, kSlots, makeDeviceAllocator(dev));
  BufferPool rgbaDst(rgba, kSlots, makeDeviceAllocator(dev));
  BufferPool smallDst(nv12Small, kSlots, makeDeviceAllocator(dev));
  std::vector<FrameLease> yp, yd, np, nd, rd, sd;
  for (int i = 0; i < kSlots; ++i) {
    yp.push_back(std::move(*yuyvPinned.tryAcquire()));
    yd.push_back(std::move(*yuyvDev.tryAcquire()));
    np.push_back(std::move(*nv12Pinned.tryAcquire()));
    nd.push_back(std::move(*nv12Dev.tryAcquire()));
    rd.push_back(std::move(*rgbaDst.tryAcquire()));
    sd.push_back(std::move(*smallDst.tryAcquire()));
    fillFrame(yp.back()->data[0], yuyv.totalBytes, i + 31);
    fillFrame(np.back()->data[0], nv12.totalBytes, i + 41);
    cuda::check(cudaMemcpy(yd.back()->data[0], yp.back()->data[0], yuyv.totalBytes, cudaMemcpyHostToDevice),
                "cudaMemcpy(yuyv)");
    cuda::check(cudaMemcpy(nd.back()->data[0], np.back()->data[0], nv12.totalBytes, cudaMemcpyHostToDevice),
                "cudaMemcpy(nv12)");
  }
  cuda::check(cudaDeviceSynchronize(), "cudaDeviceSynchronize(setup)");
  GpuConverter conv(dev, IngestMode::kCopy);
  const ConvertOptions scale;  // no crop: dst's size gives the scale
  std::vector<Path> paths;
  paths.push_back({"rp", "1080p YUYV -> RGBA, pinned memcpy + kernel", [&](int i, cudaStream_t s) {
                     conv.convert(yp[i].frame(), rd[i].frame(), s);
                   }});
  paths.push_back({"rd", "1080p YUYV -> RGBA, kernel only (in VRAM)", [&](int i, cudaStream_t s) {
                     conv.convert(yd[i].frame(), rd[i].frame(), s);
                   }});
  paths.push_back({"sp", "NV12 1080p -> 720p, pinned memcpy + kernel", [&](int i, cudaStream_t s) {
                     conv.convert(np[i].frame(), sd[i].frame(), scale, s);
                   }});
  paths.push_back({"sd", "NV12 1080p -> 720p, kernel only (in VRAM)", [&](int i, cudaStream_t s) {
                     conv.convert(nd[i].frame(), sd[i].frame(), scale, s);
                   }});
  measure(paths, opt, dev, kSlots);
  std::ostringstream os;
  os << "\n### RGBA output and scaling (bilinear), " << opt.iterations << " frames each\n\n";
  os << "| path | GPU median us | GPU p99 us | CPU enqueue us |\n|---|---|---|---|\n";
  for (auto& p : paths) {
    os << "| " << p.name << " | " << fmt(pct(p.series.gpu, 50)) << " | " << fmt(pct(p.series.gpu, 99))
       << " | " << fmt(pct(p.series.cpuEnqueue, 50)) << " |\n";
  }
  return os.str();
}

// Instantiated CUDA graphs, destroyed with the owner (the diagnostics' raw graphs).
struct GraphExecs {
  std::vector<cudaGraphExec_t> execs;
  GraphExecs() = default;
  GraphExecs(const GraphExecs&) = delete;
  GraphExecs& operator=(const GraphExecs&) = delete;
  ~GraphExecs() {
    for (auto e : execs) cuda::logIfFailed(cudaGraphExecDestroy(e), "cudaGraphExecDestroy");
  }
};

// Captures what `enqueue` puts on `capture` into a graph and instantiates it.
cudaGraphExec_t captureOnce(cudaStream_t capture, const std::function<void(cudaStream_t)>& enqueue) {
  cuda::check(cudaStreamBeginCapture(capture, cudaStreamCaptureModeThreadLocal), "cudaStreamBeginCapture");
  try {
    enqueue(capture);
  } catch (...) {
    cudaGraph_t partial = nullptr;
    cuda::logIfFailed(cudaStreamEndCapture(capture, &partial), "cudaStreamEndCapture (after an error)");
    if (partial) cuda::logIfFailed(cudaGraphDestroy(partial), "cudaGraphDestroy");
    throw;
  }
  cudaGraph_t graph = nullptr;
  cuda::check(cudaStreamEndCapture(capture, &graph), "cudaStreamEndCapture");
  cudaGraphExec_t exec = nullptr;
  const cudaError_t status = cudaGraphInstantiate(&exec, graph, 0);
  cuda::logIfFailed(cudaGraphDestroy(graph), "cudaGraphDestroy");
  cuda::check(status, "cudaGraphInstantiate");
  return exec;
}

std::string runSize(const Size& size, const Options& opt, std::string& summaryRow, std::string& diagnosticRow) {
  const int dev = opt.device;
  constexpr int kSlots = 3;  // rotate buffers so no path re-reads a cache-hot frame
  const ImageLayout yuyv = computeLayout(PixelFormat::kYUYV, size.w, size.h, 64);
  const ImageLayout nv12 = computeLayout(PixelFormat::kNV12, size.w, size.h, 64);
  const std::size_t bytes = yuyv.totalBytes;

  // Sources.
  std::vector<FrameLease> pinned, devSrc, dst;
  BufferPool pinnedPool(yuyv, kSlots, makePinnedAllocator(dev));
  BufferPool devSrcPool(yuyv, kSlots, makeDeviceAllocator(dev));
  BufferPool dstPool(nv12, kSlots, makeDeviceAllocator(dev));
  std::vector<std::uint8_t*> pageable, mmapLike;
  std::vector<HostRegistration> registrations;
  std::vector<Frame> pageableFrames, mmapFrames;
  for (int i = 0; i < kSlots; ++i) {
    pinned.push_back(std::move(*pinnedPool.tryAcquire()));
    devSrc.push_back(std::move(*devSrcPool.tryAcquire()));
    dst.push_back(std::move(*dstPool.tryAcquire()));
    fillFrame(pinned.back()->data[0], bytes, i + 1);
    cuda::check(cudaMemcpy(devSrc.back()->data[0], pinned.back()->data[0], bytes, cudaMemcpyHostToDevice),
                "cudaMemcpy");
    pageable.push_back(static_cast<std::uint8_t*>(std::aligned_alloc(4096, (bytes + 4095) / 4096 * 4096)));
    mmapLike.push_back(static_cast<std::uint8_t*>(std::aligned_alloc(4096, (bytes + 4095) / 4096 * 4096)));
    fillFrame(pageable.back(), bytes, i + 11);
    fillFrame(mmapLike.back(), bytes, i + 21);
    registrations.emplace_back(mmapLike.back(), bytes, dev);
    Frame f;
    bindLayout(f, yuyv, pageable.back(), MemoryKind::kHost);
    pageableFrames.push_back(f);
    bindLayout(f, yuyv, mmapLike.back(), MemoryKind::kPinned);
    mmapFrames.push_back(f);
  }
  DeviceBuffer floorDst(dev, bytes);
  std::vector<const std::uint8_t*> mapped;
  for (auto& p : pinned) {
    void* m = nullptr;
    cuda::check(cudaHostGetDevicePointer(&m, p->data[0], 0), "cudaHostGetDevicePointer");
    mapped.push_back(static_cast<const std::uint8_t*>(m));
  }
  // The converter's YUYV -> NV12 kernel on rows [y0, y0 + rows) of slot i, read from `from`.
  auto rawKernel = [&](const std::uint8_t* from, int i, std::uint32_t y0, std::uint32_t rows, cudaStream_t s) {
    kernels::PlanesIn in;
    in.data[0] = from + std::size_t(y0) * pinned[i]->pitch[0];
    in.pitch[0] = pinned[i]->pitch[0];
    kernels::PlanesOut out;
    out.data[0] = dst[i]->data[0] + std::size_t(y0) * dst[i]->pitch[0];
    out.data[1] = dst[i]->data[1] + std::size_t(y0 / 2) * dst[i]->pitch[1];
    out.pitch[0] = dst[i]->pitch[0];
    out.pitch[1] = dst[i]->pitch[1];
    kernels::packed422To420(kernels::Packed422::kYUYV, kernels::Out420::kNV12, in, out, size.w, rows, s);
  };
  auto rawCopy = [&](int i, std::size_t offset, std::size_t n, cudaStream_t s) {
    cuda::check(cudaMemcpyAsync(floorDst.data() + offset, pinned[i]->data[0] + offset, n, cudaMemcpyHostToDevice, s),
                "cudaMemcpyAsync(raw)");
  };
  // (sk) and (sc): the copy and the flag on a side stream, the signalled kernel on the path's stream.
  CudaStream signalSide(dev);
  StreamFlag streamWritten(dev), copied(dev, /*allowStreamWrite=*/false);
  PinnedBuffer signalError(dev, sizeof(std::uint32_t));
  void* signalErrorOnDevice = nullptr;
  cuda::check(cudaHostGetDevicePointer(&signalErrorOnDevice, signalError.data(), 0), "cudaHostGetDevicePointer");
  std::uint32_t rawTicket = 0;
  auto rawSignalled = [&](StreamFlag& flag, int i, cudaStream_t s) {
    ++rawTicket;
    cuda::check(cudaMemcpyAsync(floorDst.data(), pinned[i]->data[0], bytes, cudaMemcpyHostToDevice, signalSide.get()),
                "cudaMemcpyAsync(signalled)");
    flag.set(signalSide.get(), rawTicket);
    kernels::PlanesIn in;
    in.data[0] = floorDst.data();
    in.pitch[0] = pinned[i]->pitch[0];
    kernels::PlanesOut out;
    for (int p = 0; p < 2; ++p) {
      out.data[p] = dst[i]->data[p];
      out.pitch[p] = dst[i]->pitch[p];
    }
    const kernels::IngestSignal signal{flag.word(), rawTicket, size.h,
                                       static_cast<std::uint32_t*>(signalErrorOnDevice)};
    kernels::packed422To420(kernels::Packed422::kYUYV, kernels::Out420::kNV12, in, out, size.w, size.h, s, &signal);
  };
  // (gk) and (g2k): one graph per slot, captured on a side stream.
  GraphExecs whole, banded;
  {
    CudaStream capture(dev), side(dev);
    CudaEvent fork(dev, false), join(dev, false);
    const std::uint32_t half = size.h / 2 & ~1u;
    const std::size_t halfBytes = std::size_t(half) * pinned[0]->pitch[0];
    for (int i = 0; i < kSlots; ++i) {
      whole.execs.push_back(captureOnce(capture.get(), [&](cudaStream_t c) {
        rawCopy(i, 0, bytes, c);
        rawKernel(floorDst.data(), i, 0, size.h, c);
      }));
      banded.execs.push_back(captureOnce(capture.get(), [&](cudaStream_t c) {
        rawCopy(i, 0, halfBytes, c);
        fork.record(c);
        rawCopy(i, halfBytes, bytes - halfBytes, c);
        cuda::check(cudaStreamWaitEvent(side.get(), fork.get(), 0), "cudaStreamWaitEvent(fork)");
        rawKernel(floorDst.data(), i, 0, half, side.get());
        join.record(side.get());
        rawKernel(floorDst.data(), i, half, size.h - half, c);
        cuda::check(cudaStreamWaitEvent(c, join.get(), 0), "cudaStreamWaitEvent(join)");
      }));
    }
  }
  cuda::check(cudaDeviceSynchronize(), "cudaDeviceSynchronize(setup)");

  GpuConverter copy(dev, IngestMode::kCopy);
  GpuConverter copyCaller(dev, IngestMode::kCopy);  // (bx): used only on the benchmark's stream
  GpuConverter zero(dev, IngestMode::kZeroCopy);
  GpuConverter pipe4(dev, IngestMode::kPipelinedCopy, 4);
  GpuConverter pipe8(dev, IngestMode::kPipelinedCopy, 8);
  GpuConverter signalled(dev, IngestMode::kSignalledCopy, 1);
  GpuConverter signalled2(dev, IngestMode::kSignalledCopy, 2);
  std::vector<Path> paths;
  paths.push_back({"a", "(a) pageable memcpy + kernel", [&](int i, cudaStream_t s) {
                     copy.convert(pageableFrames[i], dst[i].frame(), s);
                   }});
  paths.push_back({"b", "(b) pinned memcpy + kernel", [&](int i, cudaStream_t s) {
                     copy.convert(pinned[i].frame(), dst[i].frame(), s);
                   }});
  paths.push_back({"r", "(r) registered mmap memcpy + kernel", [&](int i, cudaStream_t s) {
                     copy.convert(mmapFrames[i], dst[i].frame(), s);
                   }});
  paths.push_back({"c", "(c) zero-copy kernel (mapped pinned)", [&](int i, cudaStream_t s) {
                     zero.convert(pinned[i].frame(), dst[i].frame(), s);
                   }});
  paths.push_back({"p", "(p) pipelined copy, 4 bands + kernel per band", [&](int i, cudaStream_t s) {
                     pipe4.convert(pinned[i].frame(), dst[i].frame(), s);
                   }});
  paths.push_back({"p8", "(p8) pipelined copy, 8 bands + kernel per band", [&](int i, cudaStream_t s) {
                     pipe8.convert(pinned[i].frame(), dst[i].frame(), s);
                   }});
  paths.push_back({"s", "(s) signalled: copy + flag, kernel waits on the GPU", [&](int i, cudaStream_t s) {
                     signalled.convert(pinned[i].frame(), dst[i].frame(), s);
                   }});
  paths.push_back({"s2", "(s2) signalled, 2 bands", [&](int i, cudaStream_t s) {
                     signalled2.convert(pinned[i].frame(), dst[i].frame(), s);
                   }});
  paths.push_back({"d", "(d) floor: pinned memcpy alone", [&](int i, cudaStream_t s) {
                     cuda::check(cudaMemcpyAsync(floorDst.data(), pinned[i]->data[0], bytes, cudaMemcpyHostToDevice, s),
                                 "cudaMemcpyAsync(floor)");
                   }});
  paths.push_back({"e", "(e) kernel only (frame already in VRAM)", [&](int i, cudaStream_t s) {
                     copy.convert(devSrc[i].frame(), dst[i].frame(), s);
                   }});
  // The converter paths run on the converter's own stream, as src/gpupath runs them.
  for (auto& p : paths) {
    if (p.key == "a" || p.key == "b" || p.key == "r" || p.key == "e") p.stream = static_cast<cudaStream_t>(copy.stream());
    if (p.key == "c") p.stream = static_cast<cudaStream_t>(zero.stream());
    if (p.key == "p") p.stream = static_cast<cudaStream_t>(pipe4.stream());
    if (p.key == "p8") p.stream = static_cast<cudaStream_t>(pipe8.stream());
    if (p.key == "s") p.stream = static_cast<cudaStream_t>(signalled.stream());
    if (p.key == "s2") p.stream = static_cast<cudaStream_t>(signalled2.stream());
  }
  paths.push_back({"bx", "(bx) diagnostic: (b) on a caller's stream", [&](int i, cudaStream_t s) {
                     copyCaller.convert(pinned[i].frame(), dst[i].frame(), s);
                   }});
  paths.push_back({"bk", "(bk) diagnostic: raw memcpy + kernel launch, no converter", [&](int i, cudaStream_t s) {
                     rawCopy(i, 0, bytes, s);
                     rawKernel(floorDst.data(), i, 0, size.h, s);
                   }});
  paths.push_back({"ck", "(ck) diagnostic: raw zero-copy kernel launch, no converter", [&](int i, cudaStream_t s) {
                     rawKernel(mapped[i], i, 0, size.h, s);
                   }});
  paths.push_back({"gk", "(gk) diagnostic: raw memcpy + kernel as one CUDA graph launch", [&](int i, cudaStream_t s) {
                     cuda::check(cudaGraphLaunch(whole.execs[i], s), "cudaGraphLaunch");
                   }});
  paths.push_back({"g2k", "(g2k) diagnostic: the same in 2 row bands, one CUDA graph launch",
                   [&](int i, cudaStream_t s) {
                     cuda::check(cudaGraphLaunch(banded.execs[i], s), "cudaGraphLaunch");
                   }});
  paths.push_back({"sk", std::string("(sk) diagnostic: raw signalled, flag by ") + streamWritten.writer(),
                   [&](int i, cudaStream_t s) { rawSignalled(streamWritten, i, s); }});
  paths.push_back({"sc", "(sc) diagnostic: raw signalled, flag by cudaMemcpyAsync",
                   [&](int i, cudaStream_t s) { rawSignalled(copied, i, s); }});
  CudaEvent readyLike(dev, false), releasedLike(dev, false);
  paths.push_back({"skr", "(skr) diagnostic: (sk) + 2 event records after the kernel", [&](int i, cudaStream_t s) {
                     rawSignalled(streamWritten, i, s);
                     readyLike.record(s);
                     releasedLike.record(s);
                   }});

  measure(paths, opt, dev, kSlots);
  if (const auto timedOut = *reinterpret_cast<volatile std::uint32_t*>(signalError.data())) {
    throw Error(Errc::kDevice, "raw signalled kernel timed out (ticket " + std::to_string(timedOut) + ")");
  }

  std::ostringstream os;
  os << "\n### " << size.name << " (" << size.w << "x" << size.h << " YUYV, " << fmt(double(bytes) / 1e6)
     << " MB -> NV12 in VRAM), " << opt.iterations << " frames each\n\n";
  os << "| path | GPU median us | GPU p99 us | GB/s (median) | wall median us | wall p99 us | CPU enqueue us | CPU enqueue+wait us |\n";
  os << "|---|---|---|---|---|---|---|---|\n";
  auto med = [](const std::vector<double>& v) { return pct(v, 50); };
  for (auto& p : paths) {
    const double m = med(p.series.gpu);
    os << "| " << p.name << " | " << fmt(m) << " | " << fmt(pct(p.series.gpu, 99)) << " | "
       << fmt(double(bytes) / (m * 1e3)) << " | " << fmt(med(p.series.wall)) << " | " << fmt(pct(p.series.wall, 99))
       << " | " << fmt(med(p.series.cpuEnqueue)) << " | " << fmt(med(p.series.cpuTotal)) << " |\n";
  }
  auto g = [&](const char* key) {
    for (auto& p : paths)
      if (p.key == key) return med(p.series.gpu);
    return 0.0;
  };
  auto cpuB = [&] {
    for (auto& p : paths)
      if (p.key == "b") return med(p.series.cpuEnqueue);
    return 0.0;
  }();
  char ratios[1024];
  std::snprintf(ratios, sizeof ratios,
                "| %s | %.0f | %.0f | %.0f | %.0f | %.0f | %.0f | %.1f | %.1f | %.1f | %.1f | %.2fx | %.2fx | %.2fx | "
                "%.2fx | %.2fx | %.2fx | %.2fx | %.1f us (%.3f%% of a core at 30 fps) |\n",
                size.name.c_str(), g("a"), g("b"), g("r"), g("c"), g("p"), g("p8"), g("s"), g("s2"), g("d"), g("e"),
                g("b") / g("d"), g("c") / g("d"), g("p") / g("d"), g("p8") / g("d"), g("s") / g("d"),
                g("s2") / g("d"), g("a") / g("b"), cpuB, cpuB * 30 / 1e6 * 100);
  summaryRow = ratios;
  char diag[768];
  std::snprintf(diag, sizeof diag,
                "| %s | %.1f | %.1f | %.1f | %.1f | %.1f | %.1f | %.1f | %.1f | %.1f | %.1f | %.1f | %.2fx | %.2fx | %.2fx | "
                "%.2fx | %.2fx | %.2fx | %.2fx | %.2fx | %.2fx | %.2fx |\n",
                size.name.c_str(), g("b"), g("bx"), g("bk"), g("ck"), g("gk"), g("g2k"), g("s"), g("sk"), g("skr"),
                g("sc"), g("d"), g("b") / g("d"), g("bx") / g("d"), g("bk") / g("d"), g("ck") / g("d"),
                g("gk") / g("d"), g("g2k") / g("d"), g("s") / g("d"), g("sk") / g("d"), g("skr") / g("d"),
                g("sc") / g("d"));
  diagnosticRow = diag;

  for (auto& l : dst) l.reset();
  registrations.clear();
  for (auto* p : pageable) std::free(p);
  for (auto* p : mmapLike) std::free(p);
  return os.str();
}

// Host time of the CUDA calls the converter could make before a frame's copy: mean of 2000 calls,
// on an idle stream and completed events.
std::string apiCosts(int dev) {
  CudaStream stream(dev), other(dev);
  CudaEvent done(dev, false);
  StreamFlag flag(dev);
  done.record(other.get());
  other.synchronize();
  constexpr int kCalls = 2000;
  auto perCall = [&](const std::function<void()>& call) {
    const double t0 = nowUs(CLOCK_MONOTONIC);
    for (int i = 0; i < kCalls; ++i) call();
    const double t1 = nowUs(CLOCK_MONOTONIC);
    stream.synchronize();
    return (t1 - t0) / kCalls;
  };
  int current = -1;
  std::uint32_t value = 0;
  const double getDevice = perCall([&] { cuda::check(cudaGetDevice(&current), "cudaGetDevice"); });
  const double query = perCall([&] { (void)done.completed(); });
  const double wait = perCall([&] { cuda::check(cudaStreamWaitEvent(stream.get(), done.get(), 0), "cudaStreamWaitEvent"); });
  const double record = perCall([&] { done.record(stream.get()); });
  const double flagSet = perCall([&] { flag.set(stream.get(), ++value); });
  char line[512];
  std::snprintf(line, sizeof line,
                "\nHost cost per call (mean of %d, us): cudaGetDevice %.2f, cudaEventQuery (completed) %.2f, "
                "cudaStreamWaitEvent (completed event) %.2f, cudaEventRecord %.2f, StreamFlag::set (%s) %.2f.\n",
                kCalls, getDevice, query, wait, record, flag.writer(), flagSet);
  return line;
}

// One-time costs that justify registering/allocating at start-up only.
std::string oneTimeCosts(int dev) {
  const std::size_t bytes = 1920 * 1080 * 2;
  void* mem = std::aligned_alloc(4096, bytes);
  fillFrame(static_cast<std::uint8_t*>(mem), bytes, 99);
  std::vector<double> reg, unreg, alloc;
  for (int i = 0; i < 20; ++i) {
    double t0 = nowUs(CLOCK_MONOTONIC);
    HostRegistration r(mem, bytes, dev);
    double t1 = nowUs(CLOCK_MONOTONIC);
    r.reset();
    double t2 = nowUs(CLOCK_MONOTONIC);
    reg.push_back(t1 - t0);
    unreg.push_back(t2 - t1);
    t0 = nowUs(CLOCK_MONOTONIC);
    PinnedBuffer p(dev, bytes);
    t1 = nowUs(CLOCK_MONOTONIC);
    alloc.push_back(t1 - t0);
  }
  std::free(mem);
  std::ostringstream os;
  os << "\nOne-time costs for a 1080p YUYV buffer (4.1 MB), median of 20: cudaHostRegister " << fmt(pct(reg, 50))
     << " us, cudaHostUnregister " << fmt(pct(unreg, 50)) << " us, cudaHostAlloc " << fmt(pct(alloc, 50))
     << " us. Per frame this would dwarf the whole pinned path: register once at start-up.\n";
  return os.str();
}

int run(const Options& opt) {
  const GpuInfo info = probeGpu(opt.device);
  if (opt.probeOnly) {
    std::printf("%s\n", describe(info).c_str());
    return info.available ? 0 : 2;
  }
  if (!info.available) {
    std::fprintf(stderr, "zerohop_gpu_bench: %s\n", describe(info).c_str());
    return 2;
  }
  std::ostringstream report;
  report << "## GPU ingest + YUYV->NV12, single-frame latency\n\n";
  report << "Device: " << describe(info) << "\n";
  cuda::check(cudaSetDevice(info.device), "cudaSetDevice");
  cuda::check(cudaFree(nullptr), "cudaFree(nullptr) (context creation)");

  std::string summary =
      "\n### Summary (GPU-event medians, us)\n\n| frame | (a) pageable | (b) pinned | (r) registered mmap | (c) zero-copy | "
      "(p) pipelined 4 | (p8) pipelined 8 | (s) signalled | (s2) signalled 2 | (d) pinned-copy floor | (e) on device | "
      "(b)/(d) | (c)/(d) | (p)/(d) | (p8)/(d) | (s)/(d) | (s2)/(d) | (a)/(b) | host CPU per frame, path (b) |\n"
      "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|\n";
  std::string diagnostics =
      "\n### Diagnostics: where the time above the floor goes (GPU-event medians, us)\n\n| frame | (b) converter, "
      "own stream | (bx) converter, caller's stream | (bk) raw memcpy + kernel | (ck) raw zero-copy kernel | (gk) raw "
      "graph | (g2k) raw graph, 2 bands | (s) converter, signalled | (sk) raw signalled | (skr) raw signalled + 2 "
      "event records | (sc) raw signalled, copied flag | (d) floor | (b)/(d) | (bx)/(d) | (bk)/(d) | (ck)/(d) | "
      "(gk)/(d) | (g2k)/(d) | (s)/(d) | (sk)/(d) | (skr)/(d) | (sc)/(d) |\n"
      "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|\n";
  std::string details;
  for (const auto& name : opt.sizes) {
    Size s{name, 0, 0};
    if (name == "720p") s = {name, 1280, 720};
    else if (name == "1080p") s = {name, 1920, 1080};
    else if (name == "4k") s = {name, 3840, 2160};
    else {
      std::fprintf(stderr, "unknown size %s (720p, 1080p, 4k)\n", name.c_str());
      return 1;
    }
    std::string row, diagnosticRow;
    details += runSize(s, opt, row, diagnosticRow);
    summary += row;
    diagnostics += diagnosticRow;
    std::fprintf(stderr, "done %s\n", name.c_str());
  }
  report << summary << diagnostics << details << resampleRows(opt) << apiCosts(info.device)
         << oneTimeCosts(info.device);
  return bench::publishReport(report.str(), opt.out, "zerohop_gpu_bench") ? 0 : 1;
}

}  // namespace
}  // namespace zerohop

int main(int argc, char** argv) {
  zerohop::Options opt;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    auto value = [&]() -> std::string {
      if (i + 1 >= argc) {
        std::fprintf(stderr, "%s needs a value\n", a.c_str());
        std::exit(1);
      }
      return argv[++i];
    };
    if (a == "--iterations") opt.iterations = std::max(1, std::atoi(value().c_str()));
    else if (a == "--warmup") opt.warmup = std::max(0, std::atoi(value().c_str()));
    else if (a == "--device") opt.device = std::atoi(value().c_str());
    else if (a == "--out") opt.out = value();
    else if (a == "--probe") opt.probeOnly = true;
    else if (a == "--sizes") opt.sizes = zerohop::bench::splitList(value());
    else {
      std::fprintf(stderr,
                   "usage: zerohop_gpu_bench [--iterations N] [--warmup N] [--sizes 720p,1080p,4k] [--device N] "
                   "[--out FILE] | --probe\n");
      return 1;
    }
  }
  try {
    return zerohop::run(opt);
  } catch (const zerohop::Error& e) {
    std::fprintf(stderr, "zerohop_gpu_bench: %s\n", e.what());
    return 1;
  }
}
