#pragma once
// Device mode (NOT DONE: the share ring has no CUDA transport yet, docs/share-protocol.md). When a
// GPU plane is exported through DLPack, the consumer's CUDA stream must wait on the event the
// publisher recorded after writing the slot (Frame::gpu.readyEvent, imported from the IPC event
// handle), with cudaStreamWaitEvent and no host synchronisation (STYLE 5). The module will load the
// CUDA runtime at run time (dlopen), so it keeps building and importing on machines without CUDA.
// Thread-safety: reentrant.

#include <cstdint>

#include "zerohop/frame.hpp"

namespace zerohop::python {

/// Orders `consumerStream` (a cudaStream_t as DLPack passes it: 1 = legacy default stream, 2 = per-thread
/// default, -1 = consumer asks for no synchronisation, 0 = invalid for CUDA) after `sync.readyEvent`.
/// Today: throws Error(kUnsupported), since device-memory rings do not exist yet.
void orderStreamAfterProducer(const GpuSync& sync, std::intptr_t consumerStream);

}  // namespace zerohop::python
