#pragma once
// Device mode of the DLPack export: when a GPU plane is exported, the consumer's CUDA stream waits on
// the event the publisher recorded after writing the slot (Frame::gpu.readyEvent: the opened IPC
// event, or the publisher's own event for an in-process reader) with cudaStreamWaitEvent, no host
// synchronisation. device_stream_cuda.cpp when the module links zerohop::share_cuda (CUDA
// builds), device_stream.cpp (refuses) otherwise. Thread-safety: reentrant.

#include <cstdint>

#include "zerohop/frame.hpp"

namespace zerohop::python {

/// Orders `consumerStream` (a cudaStream_t as DLPack passes it: 1 = legacy default stream, 2 = per-thread
/// default, -1 = consumer asks for no synchronisation, 0 = invalid for CUDA) after `sync.readyEvent`.
/// Throws kInvalidArgument for 0, kDevice when CUDA fails, kUnsupported in a module built without CUDA.
void orderStreamAfterProducer(const GpuSync& sync, std::intptr_t consumerStream);

}  // namespace zerohop::python
