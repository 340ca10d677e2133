// zerohop_multi_gpu_bench: hand-off of a 1080p60 NV12 device ring to a reader on the same GPU vs
// another GPU (peer read, and the copy fallback), p50/p99, in one run; and what a reader costs the
// producer (its per-frame host time and frame rate, with no reader against with each reader).
// In one process: a publisher thread on GPU 0 writes each frame with a kernel and commits it; a
// reader thread subscribes with SubscribeOptions::device / deviceAccess, waits on the frame's event
// on its own stream, reads every byte with a kernel and synchronises. Latency = the reader's kernel
// done (CLOCK_MONOTONIC) - the publisher's commit (SharedFrame::publishNs). Rows needing a second
// GPU are left out (and said so) on a machine with one.
//   zerohop_multi_gpu_bench [--frames N (300)] [--out FILE.md]
#include <cuda_runtime_api.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <string>
#include <thread>
#include <vector>

#include "../gpu/bench_stats.hpp"
#include "bench_kernels.hpp"
#include "gpu/cuda_check.hpp"
#include "gpu/cuda_handles.hpp"
#include "gpupath/gpu_placement.hpp"
#include "zerohop/clock.hpp"
#include "zerohop/error.hpp"
#include "zerohop/gpu.hpp"
#include "zerohop/share.hpp"

namespace zerohop {
namespace {

using namespace std::chrono_literals;
constexpr auto kPeriod = std::chrono::nanoseconds(16'666'667);  // 60 fps
constexpr std::uint64_t kWarmUp = 30;                           // frames not counted

ImageLayout layout1080() { return computeLayout(PixelFormat::kNV12, 1920, 1080, 256); }

std::vector<bench::PlaneView> views(const Frame& f, const ImageLayout& l) {
  std::vector<bench::PlaneView> v;
  for (std::uint32_t p = 0; p < l.planeCount; ++p)
    v.push_back(bench::PlaneView{const_cast<std::uint8_t*>(f.data[p]), f.pitch[p], l.planes[p].widthBytes, l.planes[p].rows});
  return v;
}

struct Row {
  std::string label, access;
  std::vector<double> latencyUs, producerUs;
  double producerFps = 0;
  std::uint64_t missed = 0;
};

/// One run: `frames` frames published on GPU 0 at 60 fps; with readerDevice >= 0 a reader there.
Row runRow(const std::string& label, int readerDevice, bool forceCopy, int frames, const std::string& dir) {
  Row row;
  row.label = label;
  const ImageLayout l = layout1080();
  ShareOptions so;
  so.directory = dir;
  const std::string name = "mgpu" + std::to_string(::getpid()) + "_" + std::to_string(readerDevice) + (forceCopy ? "c" : "a");
  Publisher pub(name, SlotLayout::deviceImages(l, 8, 0), so);
  std::atomic<bool> ready{readerDevice < 0}, stop{false};
  std::string readerError;
  std::thread reader;
  if (readerDevice >= 0) {
    reader = std::thread([&] {
      try {
        SubscribeOptions o;
        o.directory = dir;
        o.device = readerDevice;
        if (forceCopy) o.deviceAccess = SubscribeOptions::DeviceAccess::kCopy;
        Subscriber sub(name, o);
        row.access = sub.info().deviceAccess;
        cuda::check(cudaSetDevice(readerDevice), "cudaSetDevice(reader)");
        CudaStream stream(readerDevice);
        DeviceBuffer sum(readerDevice, sizeof(unsigned long long));
        ready.store(true);
        while (!stop.load()) {
          auto f = sub.next(200ms);
          if (!f) continue;
          cuda::check(cudaStreamWaitEvent(stream.get(), static_cast<cudaEvent_t>(f->frame().gpu.readyEvent), 0),
                      "cudaStreamWaitEvent");
          const auto v = views(f->frame(), l);
          bench::launchReadFrame(v.data(), static_cast<std::uint32_t>(v.size()),
                                 reinterpret_cast<unsigned long long*>(sum.data()), stream.get());
          cuda::check(cudaStreamSynchronize(stream.get()), "cudaStreamSynchronize(reader)");
          const std::int64_t done = monotonicNs();
          if (f->valid() && f->frame().sequence > kWarmUp) row.latencyUs.push_back(static_cast<double>(done - f->publishNs()) / 1e3);
        }
        row.missed = sub.stats().missed;
      } catch (const std::exception& e) {
        readerError = e.what();
        ready.store(true);
      }
    });
  }
  while (!ready.load()) std::this_thread::sleep_for(1ms);
  {
    cuda::check(cudaSetDevice(0), "cudaSetDevice(publisher)");
    CudaStream stream(0);
    const std::int64_t start = monotonicNs();
    for (int i = 1; i <= frames + static_cast<int>(kWarmUp); ++i) {  // warm-up frames are not counted
      const std::int64_t t0 = monotonicNs();
      WriteSlot ws = pub.acquireWrite();
      const auto v = views(ws.frame(), l);
      bench::launchWriteFrame(v.data(), static_cast<std::uint32_t>(v.size()), static_cast<std::uint64_t>(i), stream.get());
      Frame meta;
      meta.sequence = static_cast<std::uint64_t>(i);
      pub.commit(std::move(ws), meta, stream.get());
      if (i > static_cast<int>(kWarmUp)) row.producerUs.push_back(static_cast<double>(monotonicNs() - t0) / 1e3);
      std::this_thread::sleep_until(std::chrono::steady_clock::time_point(std::chrono::nanoseconds(start) + kPeriod * i));
    }
    row.producerFps = (frames + static_cast<double>(kWarmUp)) * 1e9 / static_cast<double>(monotonicNs() - start);
    cuda::check(cudaStreamSynchronize(stream.get()), "cudaStreamSynchronize(publisher)");
  }
  std::this_thread::sleep_for(50ms);  // the last frame's read
  stop.store(true);
  if (reader.joinable()) reader.join();
  if (!readerError.empty()) throw Error(Errc::kDevice, label + ": " + readerError);
  return row;
}

int run(int argc, char** argv) {
  int frames = 300;
  std::string out;
  for (const auto& [k, v] : bench::keyValueArgs(argc, argv)) {
    if (k == "--frames") frames = std::stoi(v);
    else if (k == "--out") out = v;
    else {
      std::fprintf(stderr, "usage: zerohop_multi_gpu_bench [--frames N] [--out FILE.md]\n");
      return 2;
    }
  }
  const GpuInfo gpu = probeGpu(0);
  if (!gpu.available) {
    std::fprintf(stderr, "zerohop_multi_gpu_bench: no CUDA device: %s\n", gpu.reason.c_str());
    return 3;
  }
  char tmpl[] = "/tmp/zerohop-multi-gpu-bench-XXXXXX";
  if (!::mkdtemp(tmpl)) return 1;
  const std::string dir = tmpl;
  std::vector<Row> rows;
  rows.push_back(runRow("no reader (the producer alone)", -1, false, frames, dir));
  rows.push_back(runRow("reader on GPU 0 (same GPU, in place)", 0, false, frames, dir));
  rows.push_back(runRow("reader on GPU 0, forced copy", 0, true, frames, dir));
  std::string note;
  if (gpu.deviceCount >= 2) {
    rows.push_back(runRow("reader on GPU 1 (auto: peer where the GPUs can)", 1, false, frames, dir));
    rows.push_back(runRow("reader on GPU 1, forced copy", 1, true, frames, dir));
  } else {
    note = "\nOne GPU here: the rows with a reader on another GPU were not run.\n";
  }
  std::filesystem::remove_all(dir);

  std::string r = "## Multi-GPU hand-off (zerohop_multi_gpu_bench, 1080p60 NV12, " + std::to_string(frames) +
                  " frames a row)\n\n" + describe(gpu) + ", " + std::to_string(gpu.deviceCount) + " CUDA device(s)\n\n";
  r += "| row | access | hand-off p50 (us) | p99 (us) | frames read | missed | producer host p50 (us) | p99 (us) | producer fps |\n";
  r += "|---|---|---|---|---|---|---|---|---|\n";
  for (const Row& row : rows) {
    r += "| " + row.label + " | " + (row.access.empty() ? "-" : row.access) + " | " +
         (row.latencyUs.empty() ? "-" : bench::fmt(bench::pct(row.latencyUs, 50))) + " | " +
         (row.latencyUs.empty() ? "-" : bench::fmt(bench::pct(row.latencyUs, 99))) + " | " +
         std::to_string(row.latencyUs.size()) + " | " + std::to_string(row.missed) + " | " +
         bench::fmt(bench::pct(row.producerUs, 50)) + " | " + bench::fmt(bench::pct(row.producerUs, 99)) + " | " +
         bench::fmt(row.producerFps) + " |\n";
  }
  r += note;
  // The machine's GPUs and links as `zerohop probe` prints them (the CLI is not built on the GPU machine).
  r += "\n```\n" + renderGpuTopology(probeGpuTopology(), {}) + "```\n";
  return bench::publishReport(r, out, "zerohop_multi_gpu_bench") ? 0 : 1;
}

}  // namespace
}  // namespace zerohop

int main(int argc, char** argv) {
  try {
    return zerohop::run(argc, argv);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "zerohop_multi_gpu_bench: %s\n", e.what());
    return 1;
  }
}
