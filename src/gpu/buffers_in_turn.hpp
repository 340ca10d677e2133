#pragma once
// Internal: two host buffers used in turn by asynchronous GPU reads (the host fills one while the GPU
// may still read the other). Thread-safety: none; one owner.

#include <cuda_runtime_api.h>

#include "gpu/cuda_handles.hpp"

namespace zerohop {

class BuffersInTurn {
 public:
  BuffersInTurn() = default;  ///< empty: create() before use
  /// Makes the two events on `device`; both buffers start free.
  void create(int device) {
    for (CudaEvent& e : read_) e = CudaEvent(device, /*timing=*/false);
    forget();
  }

  /// The buffer to fill next, once the GPU work that last read it (two turns ago) has run.
  int acquire() const {
    if (pending_[next_]) read_[next_].synchronize();
    return next_;
  }
  /// The GPU reads the acquired buffer through work enqueued on `stream` so far: marks where it is
  /// free again and hands the turn to the other buffer.
  void readOn(cudaStream_t stream) {
    read_[next_].record(stream);
    pending_[next_] = true;
    next_ ^= 1;
  }
  /// After the caller has waited for everything itself (error recovery): no wait is owed.
  void forget() noexcept { pending_[0] = pending_[1] = false; }

 private:
  CudaEvent read_[2];
  bool pending_[2] = {false, false};
  int next_ = 0;
};

}  // namespace zerohop
