// The C API for renderers reading device frames: zh_frame_get_ring_memory and zh_ready_semaphore_*
// over SharedFrame::deviceMemory, ReadySemaphore and SharedFrame::signalWhenReady.
#include <unistd.h>

#include <optional>
#include <string>

#include "capi/handles.hpp"
#include "capi/status.hpp"

using namespace zerohop;
using zerohop::capi::badHandle;
using zerohop::capi::fail;
using zerohop::capi::guarded;

extern "C" {

zh_status zh_frame_get_ring_memory(const zh_frame* frame, int* fd, uint64_t* allocation_bytes,
                                   uint64_t* slot_stride, uint64_t* slot_offset, uint64_t* session_id) {
  constexpr const char* fn = "zh_frame_get_ring_memory";
  if (!capi::frames().contains(frame)) return badHandle(fn, "frame");
  const std::optional<DeviceRingMemory> m = frame->frame.deviceMemory();
  if (!m)
    return fail(
        fn, ZH_ERR_NOT_FOUND,
        "this frame's ring has no memory fd to import (a host ring, a legacy CUDA IPC ring, or a reader in "
        "the publisher's own process): read its pointers instead");
  if (fd) *fd = m->fd;
  if (allocation_bytes) *allocation_bytes = m->allocationBytes;
  if (slot_stride) *slot_stride = m->slotStride;
  if (slot_offset) *slot_offset = m->slotOffset;
  if (session_id) *session_id = m->sessionId;
  return ZH_OK;
}

zh_status zh_ready_semaphore_import(int fd, int timeline, int cuda_device, zh_ready_semaphore** out) {
  constexpr const char* fn = "zh_ready_semaphore_import";
  if (!out) {
    if (fd >= 0) ::close(fd);  // ours in every case
    return fail(fn, ZH_ERR_INVALID_ARGUMENT, "out is NULL");
  }
  *out = nullptr;
  return guarded(fn, [&] {
    ReadySemaphore s(fd, timeline ? ReadySemaphore::Kind::kTimeline : ReadySemaphore::Kind::kBinary,
                     cuda_device);
    auto* h = new zh_ready_semaphore(std::move(s));
    capi::readySemaphores().add(h);
    *out = h;
    return ZH_OK;
  });
}

zh_status zh_ready_semaphore_destroy(zh_ready_semaphore* semaphore) {
  constexpr const char* fn = "zh_ready_semaphore_destroy";
  if (!semaphore) return ZH_OK;
  if (!capi::readySemaphores().take(semaphore)) return badHandle(fn, "semaphore");
  delete semaphore;  // ~ReadySemaphore logs a failed teardown, never throws
  return ZH_OK;
}

zh_status zh_frame_signal_when_ready(const zh_frame* frame, zh_ready_semaphore* semaphore, uint64_t value) {
  constexpr const char* fn = "zh_frame_signal_when_ready";
  if (!capi::frames().contains(frame)) return badHandle(fn, "frame");
  if (!capi::readySemaphores().contains(semaphore)) return badHandle(fn, "semaphore");
  return guarded(fn, [&] {
    frame->frame.signalWhenReady(semaphore->semaphore, value);
    return ZH_OK;
  });
}

}  // extern "C"
