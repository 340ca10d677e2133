#pragma once
// The ready events a GPU producer (converter, nvJPEG and NVDEC decoders) puts in dst.gpu.readyEvent:
// one per destination buffer, re-recorded each time that buffer is written, for the kCapacity buffers
// written most recently. A caller that writes into ever new buffers (a fresh allocation per frame)
// does not grow it: the least recently written buffer's event goes to the new one. An event is never
// destroyed before its producer, and one that changes buffer is recorded only after a wait on its
// previous record, so a frame that still names it waits for its own work too (and at most for later
// work of the same producer).
// Thread-safety: thread-bound (one per converter or decoder).

#include <cstddef>

#include "gpu/cuda_check.hpp"
#include "gpu/cuda_handles.hpp"
#include "gpu/recent_slots.hpp"

namespace zerohop::gpu_detail {

class ReadyEvents {
 public:
  /// More than any pool a pipeline writes into (a few to a few dozen slots).
  static constexpr std::size_t kCapacity = 32;

  explicit ReadyEvents(int device) : device_(device) {}

  /// Records `buffer`'s event on `stream`, after the work enqueued there that wrote it.
  const CudaEvent& record(const void* buffer, cudaStream_t stream) {
    const auto slot = events_.find(buffer, [&] { return CudaEvent(device_, /*timing=*/false); });
    if (slot.takenOver) {
      cuda::check(cudaStreamWaitEvent(stream, slot.value.get(), 0), "cudaStreamWaitEvent(previous ready event)");
    }
    slot.value.record(stream);
    return slot.value;
  }

  std::size_t size() const noexcept { return events_.size(); }

 private:
  int device_;
  RecentSlots<const void*, CudaEvent> events_{kCapacity};
};

}  // namespace zerohop::gpu_detail
