// The C API for renderers reading device frames: zh_frame_get_ring_memory, zh_ready_semaphore_* and the
// next frame read before it exists (zh_reader_signal_on_publish, zh_reader_upcoming, zh_reader_confirm)
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

zh_status zh_reader_signal_on_publish(zh_reader* reader, int fd) {
  constexpr const char* fn = "zh_reader_signal_on_publish";
  if (!capi::readers().contains(reader)) {
    if (fd >= 0) ::close(fd);  // ours in every case
    return badHandle(fn, "reader");
  }
  return guarded(fn, [&] {
    reader->subscriber.signalOnPublish(fd);
    return ZH_OK;
  });
}

zh_status zh_reader_upcoming(zh_reader* reader, uint64_t* publish_index, uint32_t* slot,
                             uint64_t* slot_offset) {
  constexpr const char* fn = "zh_reader_upcoming";
  if (!capi::readers().contains(reader)) return badHandle(fn, "reader");
  return guarded(fn, [&] {
    const std::optional<UpcomingFrame> u = reader->subscriber.upcoming();
    if (!u)
      return fail(fn, ZH_ERR_NOT_FOUND,
                  "the publisher announced no next frame (a host ring, or nothing published yet)");
    if (publish_index) *publish_index = u->publishIndex;
    if (slot) *slot = u->slot;
    if (slot_offset) *slot_offset = u->slotOffset;
    return ZH_OK;
  });
}

zh_status zh_reader_confirm(zh_reader* reader, uint64_t publish_index, uint32_t slot, zh_frame** frame) {
  constexpr const char* fn = "zh_reader_confirm";
  if (!frame) return fail(fn, ZH_ERR_INVALID_ARGUMENT, "frame (the out-pointer) is NULL");
  *frame = nullptr;
  if (!capi::readers().contains(reader)) return badHandle(fn, "reader");
  return guarded(fn, [&] {
    UpcomingFrame u;
    u.publishIndex = publish_index;
    u.slot = slot;
    std::optional<SharedFrame> f = reader->subscriber.confirm(u);
    if (!f)
      return fail(fn, ZH_ERR_NOT_FOUND,
                  "slot " + std::to_string(slot) + " does not hold publish " + std::to_string(publish_index) +
                      " (written elsewhere, or overwritten since): read the frame with zh_reader_next");
    auto* h = new zh_frame(std::move(*f));
    capi::frames().add(h);
    *frame = h;
    return ZH_OK;
  });
}

}  // extern "C"
