#pragma once
// In-process readers of a device ring. A Subscriber in the publisher's own process cannot open the
// publisher's CUDA IPC handles (CUDA refuses handles in the exporting process) and does not need to:
// it uses the publisher's device pointers and slot events directly (same CUDA context: no IPC, no
// GPU context switch). Everything else stays the protocol's: the handshake, the control block and
// seqlock, the lease page, overruns. A publisher lists its DeviceSlots here under its sessionId; a
// reader whose Welcome names this process as the producer asks for them by that sessionId.
// The import holds a shared_ptr to the slots, so the device memory outlives the Publisher while an
// in-process SharedFrame still points at it (the drain before freeing waits only for other processes).
// Thread-safety: thread-safe (one mutex around the registry).

#include <cstdint>
#include <memory>

#include "share/device_transport.hpp"

namespace zerohop::share_detail {

/// Publisher: makes `slots` available to in-process readers of session `sessionId`.
void listInProcess(std::uint64_t sessionId, const std::shared_ptr<DeviceSlots>& slots);
/// Publisher, on close: new in-process readers of `sessionId` find nothing (existing ones keep theirs).
void unlistInProcess(std::uint64_t sessionId) noexcept;
/// Reader: the slots of session `sessionId` of this process as a DeviceImport, or nullptr when no
/// live publisher of this process has that session.
std::unique_ptr<DeviceImport> importInProcess(std::uint64_t sessionId, std::uint64_t slotStride);

}  // namespace zerohop::share_detail
