#pragma once
// The reader side of zerohop_share_gpu_bench (reader processes and in-process reader threads) and
// what the orchestrator shares with it: the frame, the reader kernels' choice, the gpuwait
// prototype's doorbell. Definitions of paths and columns: share_gpu_bench.cpp's header comment.
// Thread-safety: the functions are reentrant; a Subscriber is used by one reader at a time.
#include <cuda.h>
#include <cuda_runtime_api.h>

#include <array>
#include <chrono>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "bench_kernels.hpp"
#include "gpu/cuda_check.hpp"
#include "gpu/driver_entry.hpp"
#include "zerohop/error.hpp"
#include "zerohop/frame.hpp"
#include "zerohop/share.hpp"

namespace zerohop::share_bench {

using bench::PlaneView;

constexpr int kDevice = 0;

/// What a reader process or thread runs on each frame (the orchestrator's knobs).
struct ReaderWork {
  std::uint32_t readBlocks = 0;
  std::string kernel = "reduce";  ///< rows | fused | reduce (share_gpu_bench.cpp: --reader-kernel)
  bool timing = false;
};

/// One reader's samples, ns: commit -> used, commit -> seen, seen -> enqueued, the kernel's GPU time.
struct Samples {
  std::vector<std::int64_t> total, wake, launch, kernel;
  std::uint64_t bytesCopied = 0;  ///< bytes this reader copied itself (host-rt: the H2D)
  bool pinned = true;
};

/// Page-locks host memory once (register at start-up, never per frame); best effort.
class Registration {
 public:
  Registration(void* p, std::size_t bytes, unsigned flags) {
    if (cudaHostRegister(p, bytes, flags) == cudaSuccess) {
      ptr_ = p;
    } else {
      (void)cudaGetLastError();
    }
  }
  ~Registration() {
    if (ptr_) cuda::logIfFailed(cudaHostUnregister(ptr_), "cudaHostUnregister");
  }
  Registration(const Registration&) = delete;
  Registration& operator=(const Registration&) = delete;
  bool ok() const { return ptr_ != nullptr; }

 private:
  void* ptr_ = nullptr;
};

/// Pins the calling thread (and the threads it starts later) to one CPU.
void pinThisThread(int cpu);
/// 1920x1080 NV12, rows 256-byte aligned: the benchmark's frame.
ImageLayout frameLayout();
std::array<PlaneView, kMaxPlanes> viewsOf(const Frame& f, const ImageLayout& l);

bool isGpuWait(const std::string& path);
bool isSpin(const std::string& path);
/// The path without "-spin".
std::string basePath(const std::string& path);
/// ipc-ant: next() with SubscribeOptions::anticipate (sleep until just before the frame is due, then spin).
std::chrono::microseconds subscribeAnticipation(const std::string& path);

/// Where the gpuwait prototype's publisher leaves its doorbell's legacy CUDA IPC handle (the bench's
/// private 0700 directory), before it starts the readers.
std::string doorbellFile(const std::string& dir, const std::string& name);
/// The doorbell word for `sequence` in `slot` ((sequence << 6) | slot, 32 bits, compared cyclically).
std::uint32_t doorbellValue(std::uint64_t sequence, std::uint32_t slot);

/// One reader's loop on a host-launched path (every path but gpuwait), in a reader process or an
/// in-process thread: warms its context and kernel, calls `ready`, then uses every frame it gets
/// until the publisher closes the ring.
Samples readFrames(Subscriber& sub, const std::string& path, std::uint64_t warmup, const ReaderWork& work,
                   const std::function<void()>& ready);
/// A reader process: argv = PROGRAM --reader NAME DIR PATH WARMUP [--cpu N] [--read-blocks N]
/// [--kernel rows|fused|reduce] [--timing 0|1]. Prints "ready SMS USED", then "samples ...".
int runReader(int argc, char** argv);
/// The three reader kernels must sum a written frame alike (and to non-zero), or the rows that
/// compare them would compare different work. Throws kInternal naming the kernel that differs.
void checkReaderKernels();

}  // namespace zerohop::share_bench
