#pragma once
// Internal: a device ring read by a GPU other than the publisher's (or copied on request).
//   same GPU           the import as it is (in place)
//   peer               cudaDeviceCanAccessPeer(reader, ring) and the ring mapped for the reader's GPU
//                      too (VMM: cuMemSetAccess for that device; cudaMalloc'd slots:
//                      cudaDeviceEnablePeerAccess): the reader's kernels read the slot over the link
//   copy               otherwise, or SubscribeOptions::DeviceAccess::kCopy: each frame read is one
//                      cudaMemcpyPeerAsync of the slot into a buffer of the reader on its GPU, on a
//                      stream of that GPU ordered after the slot's event; the frame's event is
//                      recorded after the copy. Buffers are reused once their SharedFrame is gone.
// Never a host round trip of the reader's own: the mode and its reason are in ShareInfo and in the
// subscription's first log line. Thread-safety: thread-safe (the buffer pool is locked).

#include <memory>
#include <string>

#include "share/device_transport.hpp"

namespace zerohop::share_detail {

/// The mode a reader on `reader` gets for a ring on CUDA device `ringDevice` (before mapping).
/// Throws Error(kInvalidArgument) when the reader's device does not exist.
ReaderAccess planReaderAccess(int ringDevice, const ReaderDevice& reader);

/// `import` adapted to the reader: unchanged on the ring's GPU, peer-mapped or copying on another.
std::unique_ptr<DeviceImport> adaptForReader(std::unique_ptr<DeviceImport> import, const ReaderDevice& reader,
                                             const std::string& shareName);

}  // namespace zerohop::share_detail
