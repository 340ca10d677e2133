// The C API's reader side: zh_reader_* and zh_frame_* over zerohop::Subscriber / SharedFrame.
#include <algorithm>
#include <chrono>
#include <cstddef>
#include <cstdio>
#include <cstring>

#include "capi/device_wait.hpp"
#include "capi/enum_map.hpp"
#include "capi/frame_info.hpp"
#include "capi/handles.hpp"
#include "capi/status.hpp"
#include "capi/versioned.hpp"
#include "zerohop/clock.hpp"
#include "zerohop/timecode.hpp"

using namespace zerohop;
using zerohop::capi::badHandle;
using zerohop::capi::fail;
using zerohop::capi::guarded;

namespace {

zh_status badSize(const char* function, const char* type, std::size_t firstSize) {
  return fail(function, ZH_ERR_INVALID_ARGUMENT,
              std::string(type) + ".struct_size is below " + std::to_string(firstSize) +
                  ", the struct's first released size: set it to sizeof(" + type + ") (or use the ZH_*_INIT macro)");
}

std::chrono::milliseconds millis(std::int32_t ms) {
  return std::chrono::milliseconds(std::max<std::int32_t>(ms, 0));
}

zh_status handOut(std::optional<SharedFrame> f, zh_frame** out, const char* function, const std::string& name,
                  std::int32_t timeoutMs) {
  if (!f)
    return fail(function, ZH_ERR_TIMEOUT,
                "no frame from share '" + name + "' within " + std::to_string(timeoutMs) +
                    " ms (is the publisher producing? try a longer timeout)");
  auto* h = new zh_frame(std::move(*f));
  capi::frames().add(h);
  *out = h;
  return ZH_OK;
}

}  // namespace

extern "C" {

zh_status zh_reader_open(const char* name, std::int32_t timeout_ms, zh_reader** reader) {
  zh_reader_options options = ZH_READER_OPTIONS_INIT;
  options.open_timeout_ms = timeout_ms;
  return zh_reader_open_with(name, &options, reader);
}

zh_status zh_reader_open_with(const char* name, const zh_reader_options* options, zh_reader** reader) {
  constexpr const char* fn = "zh_reader_open";
  return guarded(fn, [&]() -> zh_status {
    if (!reader) return fail(fn, ZH_ERR_INVALID_ARGUMENT, "reader (the out-pointer) is NULL");
    *reader = nullptr;
    if (!name) return fail(fn, ZH_ERR_INVALID_ARGUMENT, "name is NULL");
    if (!options) return fail(fn, ZH_ERR_INVALID_ARGUMENT, "options is NULL (use zh_reader_open, or ZH_READER_OPTIONS_INIT)");
    if (options->struct_size < capi::kReaderOptionsFirstSize)
      return badSize(fn, "zh_reader_options", capi::kReaderOptionsFirstSize);
    // Members past the caller's struct (an older header) keep their defaults.
    const zh_reader_options o = capi::readVersioned(*options, zh_reader_options ZH_READER_OPTIONS_INIT, capi::kReaderOptionsReleases);
    SubscribeOptions so;
    if (o.directory) so.directory = o.directory;
    if (o.handshake_timeout_ms > 0) so.handshakeTimeout = std::chrono::milliseconds(o.handshake_timeout_ms);
    if (o.spin_us >= 0) so.spinBeforeSleep = std::chrono::microseconds(o.spin_us);
    so.waitForPublisher = std::chrono::milliseconds(std::max(o.open_timeout_ms, 0));
    so.device = o.cuda_device;
    if (o.device_copy) so.deviceAccess = SubscribeOptions::DeviceAccess::kCopy;
    try {
      auto* h = new zh_reader(Subscriber(name, so));
      capi::readers().add(h);
      *reader = h;
      return ZH_OK;
    } catch (const Error& e) {
      if (e.code() != Errc::kNotFound) throw;
      return fail(fn, ZH_ERR_NOT_FOUND,
                  std::string(e.what()) + "; start the publisher first, or give a timeout to wait for it");
    }
  });
}

zh_status zh_reader_close(zh_reader* reader) {
  constexpr const char* fn = "zh_reader_close";
  if (!reader) return ZH_OK;
  if (!capi::readers().take(reader)) return badHandle(fn, "reader");
  return guarded(fn, [&] {
    delete reader;
    return ZH_OK;
  });
}

zh_status zh_reader_next(zh_reader* reader, std::int32_t timeout_ms, zh_frame** frame) {
  constexpr const char* fn = "zh_reader_next";
  if (!frame) return fail(fn, ZH_ERR_INVALID_ARGUMENT, "frame (the out-pointer) is NULL");
  *frame = nullptr;
  if (!capi::readers().contains(reader)) return badHandle(fn, "reader");
  return guarded(fn, [&] {
    return handOut(reader->subscriber.next(millis(timeout_ms)), frame, fn, reader->subscriber.info().name,
                   timeout_ms);
  });
}

zh_status zh_reader_latest(zh_reader* reader, std::int32_t timeout_ms, zh_frame** frame) {
  constexpr const char* fn = "zh_reader_latest";
  if (!frame) return fail(fn, ZH_ERR_INVALID_ARGUMENT, "frame (the out-pointer) is NULL");
  *frame = nullptr;
  if (!capi::readers().contains(reader)) return badHandle(fn, "reader");
  return guarded(fn, [&] {
    auto f = reader->subscriber.latest();
    if (!f) f = reader->subscriber.next(millis(timeout_ms));  // nothing published yet: wait for the first
    return handOut(std::move(f), frame, fn, reader->subscriber.info().name, timeout_ms);
  });
}

zh_status zh_reader_reconnect(zh_reader* reader) {
  constexpr const char* fn = "zh_reader_reconnect";
  if (!capi::readers().contains(reader)) return badHandle(fn, "reader");
  return guarded(fn, [&] {
    reader->subscriber.reconnect();
    return ZH_OK;
  });
}

zh_status zh_reader_get_fd(zh_reader* reader, int* fd) {
  constexpr const char* fn = "zh_reader_get_fd";
  if (!fd) return fail(fn, ZH_ERR_INVALID_ARGUMENT, "fd (the out-pointer) is NULL");
  *fd = -1;
  if (!capi::readers().contains(reader)) return badHandle(fn, "reader");
  return guarded(fn, [&] {
    *fd = reader->subscriber.pollFd();
    return ZH_OK;
  });
}

zh_status zh_reader_get_info(zh_reader* reader, zh_share_info* info) {
  constexpr const char* fn = "zh_reader_get_info";
  if (!capi::readers().contains(reader)) return badHandle(fn, "reader");
  if (!info) return fail(fn, ZH_ERR_INVALID_ARGUMENT, "info is NULL");
  if (info->struct_size < capi::kShareInfoFirstSize) return badSize(fn, "zh_share_info", capi::kShareInfoFirstSize);
  return guarded(fn, [&] {
    const ShareInfo& s = reader->subscriber.info();
    zh_share_info out{};
    // Encoded shares: the ring's layout names the codec; the picture's size travels with each unit.
    out.format = capi::formatToC(s.layout.format);
    out.width = s.layout.width;
    out.height = s.layout.height;
    out.encoded = s.encoded ? 1 : 0;
    out.slots = s.slots;
    out.slot_capacity = s.slotCapacity;
    out.memory = capi::memoryToC(s.memory);
    out.publisher_pid = s.publisherPid;
    out.session_id = s.sessionId;
    std::snprintf(out.transport, sizeof out.transport, "%s", s.transport.c_str());
    out.ring_device = s.ringDevice;
    out.reader_device = s.readerDevice;
    std::snprintf(out.device_access, sizeof out.device_access, "%s", s.deviceAccess.c_str());
    capi::writeVersioned(info, out);
    return ZH_OK;
  });
}

zh_status zh_reader_get_stats(zh_reader* reader, zh_reader_stats* stats) {
  constexpr const char* fn = "zh_reader_get_stats";
  if (!capi::readers().contains(reader)) return badHandle(fn, "reader");
  if (!stats) return fail(fn, ZH_ERR_INVALID_ARGUMENT, "stats is NULL");
  if (stats->struct_size < capi::kReaderStatsFirstSize)
    return badSize(fn, "zh_reader_stats", capi::kReaderStatsFirstSize);
  return guarded(fn, [&] {
    const SubscriberStats s = reader->subscriber.stats();
    zh_reader_stats out{};
    out.frames = s.frames;
    out.overruns = s.overruns;
    out.missed = s.missed;
    out.reconnects = s.reconnects;
    capi::writeVersioned(stats, out);
    return ZH_OK;
  });
}

zh_status zh_frame_get_info(const zh_frame* frame, zh_frame_info* info) {
  constexpr const char* fn = "zh_frame_get_info";
  if (!capi::frames().contains(frame)) return badHandle(fn, "frame");
  if (!info) return fail(fn, ZH_ERR_INVALID_ARGUMENT, "info is NULL");
  if (info->struct_size < capi::kFrameInfoFirstSize) return badSize(fn, "zh_frame_info", capi::kFrameInfoFirstSize);
  capi::describeFrame(frame->frame.frame(), frame->frame.publishIndex(), frame->frame.publishNs(), info);
  return ZH_OK;
}

zh_status zh_frame_wait_on_stream(const zh_frame* frame, void* cuda_stream) {
  constexpr const char* fn = "zh_frame_wait_on_stream";
  if (!capi::frames().contains(frame)) return badHandle(fn, "frame");
  const Frame& f = frame->frame.frame();
  if (f.memory != MemoryKind::kDevice || !f.gpu.readyEvent) return ZH_OK;
  return guarded(fn, [&] {
    capi::streamWaitEvent(cuda_stream, f.gpu.readyEvent, f.gpu.device);
    return ZH_OK;
  });
}

zh_status zh_frame_check(const zh_frame* frame) {
  constexpr const char* fn = "zh_frame_check";
  if (!capi::frames().contains(frame)) return badHandle(fn, "frame");
  if (frame->frame.valid()) return ZH_OK;
  return fail(fn, ZH_ERR_OVERWRITTEN,
              "the publisher rewrote this frame's slot while it was read (held past the lease timeout, or "
              "every slot was leased): drop what was read; release frames sooner or ask for more slots");
}

zh_status zh_frame_read_timecode(const zh_frame* frame, std::uint64_t* wall_clock_ms, std::uint32_t* sequence) {
  constexpr const char* fn = "zh_frame_read_timecode";
  if (!capi::frames().contains(frame)) return badHandle(fn, "frame");
  if (!wall_clock_ms || !sequence) return fail(fn, ZH_ERR_INVALID_ARGUMENT, "wall_clock_ms or sequence is NULL");
  const Frame& f = frame->frame.frame();
  if (f.memory == MemoryKind::kDevice || isCompressed(f.format))
    return fail(fn, ZH_ERR_UNSUPPORTED,
                "the timecode is read from host pixels: device and encoded frames have none to read here");
  const auto tc = readTimecode(f);
  if (!tc) return fail(fn, ZH_ERR_NOT_FOUND, "no timecode in this frame (it was not drawn, or is damaged)");
  *wall_clock_ms = tc->wallClockMs;
  *sequence = tc->sequence;
  return ZH_OK;
}

zh_status zh_frame_release(zh_frame* frame) {
  constexpr const char* fn = "zh_frame_release";
  if (!frame) return ZH_OK;
  if (!capi::frames().take(frame)) return badHandle(fn, "frame");
  delete frame;  // ~SharedFrame never throws
  return ZH_OK;
}

}  // extern "C"
