#pragma once
// Internal: the CUDA side of a FrameInput with device slots: the slots' memory, one ready event per
// slot, and copies in. Built with CUDA in input_device_cuda.cpp; input_device_unbuilt.cpp answers
// kUnsupported. Opaque void* for CUDA handles so frame_input.cpp carries no CUDA header.
// Thread-safety: thread-safe for distinct slots (each slot is in one writer's hands at a time); the
// copy stream is used under the FrameInput's commit path only.

#include <cstdint>
#include <memory>

#include "zerohop/buffer_pool.hpp"
#include "zerohop/frame.hpp"

namespace zerohop {

class InputDevice {
 public:
  /// Device `device`, `slots` slots. Throws Error (kUnsupported without CUDA, kUnavailable/kDevice).
  static std::unique_ptr<InputDevice> open(int device, std::uint32_t slots);
  virtual ~InputDevice() = default;  ///< waits for pending copies; never throws
  virtual int device() const noexcept = 0;
  virtual std::unique_ptr<FrameAllocator> allocator() = 0;
  /// Records slot `slot`'s event on `stream` (a cudaStream_t) and returns it (a cudaEvent_t).
  virtual void* recordOn(std::uint32_t slot, void* stream) = 0;
  /// Makes slot `slot`'s event complete after `event` (a cudaEvent_t of the writer) and returns it.
  virtual void* recordAfter(std::uint32_t slot, void* event) = 0;
  /// Copies `src` (host, pinned or device; ordered after src.gpu.readyEvent when set) into `dst`'s
  /// planes on `stream` (nullptr: an internal stream, and the host waits for the copy), records slot
  /// `slot`'s event after it and returns the event.
  virtual void* copyIn(std::uint32_t slot, const Frame& src, const Frame& dst, void* stream) = 0;
};

}  // namespace zerohop
