#pragma once
// A renderer's semaphore (an opaque fd from Vulkan) imported into CUDA with the stream that signals
// it after a frame's ready event: the CUDA half of ReadySemaphore / SharedFrame::signalWhenReady.
// Thread-safety: one thread at a time.

#include <cuda_runtime_api.h>

#include <cstdint>

#include "gpu/cuda_handles.hpp"

namespace zerohop::share_detail {

class CudaSemaphore {
 public:
  /// Takes ownership of `fd` (CUDA's once imported; closed here when the import fails). Throws
  /// kDevice naming cudaImportExternalSemaphore.
  CudaSemaphore(int fd, bool timeline, int device);
  /// Waits for the signals queued on its stream, then destroys the import (logs a failure).
  ~CudaSemaphore();
  CudaSemaphore(const CudaSemaphore&) = delete;
  CudaSemaphore& operator=(const CudaSemaphore&) = delete;

  /// On the GPU, after `readyEvent` (a cudaEvent_t; null: at once): signal (a timeline semaphore to
  /// `value`). Never blocks the host.
  void signalAfter(void* readyEvent, std::uint64_t value);
  /// Signals on `stream` (a cudaStream_t of this device: the work before it on that stream first), and
  /// records an event after it there, so the destructor waits for that signal too. Never blocks.
  void signalOn(void* stream, std::uint64_t value);

 private:
  cudaExternalSemaphore_t semaphore_ = nullptr;
  bool timeline_;
  int device_;
  CudaStream stream_;
  CudaEvent lastForeign_;  // recorded after the last signalOn, on that stream (null: none yet)
};

}  // namespace zerohop::share_detail
