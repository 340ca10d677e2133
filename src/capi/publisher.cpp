// The C API's publisher side: zh_publisher_* and zh_slot_* over zerohop::Publisher / WriteSlot, and over
// a zh_stream's FrameInput / InputSlot (zh_stream_input).
#include <algorithm>
#include <cstddef>
#include <cstring>

#include "capi/frame_info.hpp"
#include "capi/handles.hpp"
#include "capi/status.hpp"
#include "zerohop/clock.hpp"

using namespace zerohop;
using zerohop::capi::fail;
using zerohop::capi::guarded;

namespace {

zh_status badHandle(const char* function, const char* what) {
  return fail(function, ZH_ERR_INVALID_ARGUMENT,
              std::string(what) + " is NULL, already ended, or not a handle this function takes");
}

bool knownFormat(zh_format f) {
  return f > ZH_FORMAT_UNKNOWN && f <= ZH_FORMAT_H264;
}

SlotLayout layoutFor(const zh_publisher_options& o) {
  if (!knownFormat(o.format))
    throw Error(Errc::kInvalidArgument, "options.format " + std::to_string(o.format) + " is not a zh_format");
  const auto format = static_cast<PixelFormat>(o.format);
  const std::uint32_t slots = o.slots ? o.slots : 4;
  if (isCompressed(format)) {
    if (o.memory != ZH_MEMORY_HOST)
      throw Error(Errc::kInvalidArgument, "encoded shares (H.264, MJPEG) live in host memory: set memory ZH_MEMORY_HOST");
    if (o.unit_capacity == 0)
      throw Error(Errc::kInvalidArgument, "encoded shares need options.unit_capacity (the largest unit, in bytes)");
    return SlotLayout::encoded(format, o.unit_capacity, slots);
  }
  if (o.memory == ZH_MEMORY_DEVICE) {
    if (o.cuda_device < 0) throw Error(Errc::kInvalidArgument, "options.cuda_device must be a CUDA device ordinal (>= 0)");
    return SlotLayout::deviceImages(computeLayout(format, o.width, o.height, o.pitch_align ? o.pitch_align : 256),
                                    slots, o.cuda_device);
  }
  if (o.memory != ZH_MEMORY_HOST)
    throw Error(Errc::kInvalidArgument, "options.memory must be ZH_MEMORY_HOST or ZH_MEMORY_DEVICE");
  return SlotLayout::images(computeLayout(format, o.width, o.height, o.pitch_align ? o.pitch_align : 1), slots);
}

/// The Frame that carries a commit's or publish's metadata (times default to now).
Frame metaFrame(const zh_frame_meta* meta) {
  Frame f;
  if (meta) {
    f.sequence = meta->sequence;
    f.wallClockMs = meta->wall_clock_ms;
    for (std::size_t i = 0; i < kStageCount && i < ZH_STAGE_COUNT; ++i) f.times.ns[i] = meta->stage_ns[i];
    f.bytesUsed = meta->bytes_used;
    f.keyframe = meta->keyframe != 0;
    f.gpu.readyEvent = meta->cuda_event;
  }
  if (f.wallClockMs == 0) f.wallClockMs = realtimeNs() / 1'000'000;
  if (f.times.at(Stage::kCapture) == 0) f.times.mark(Stage::kCapture, monotonicNs());
  return f;
}

bool metaSized(const zh_frame_meta* meta) {
  return !meta || meta->struct_size >= offsetof(zh_frame_meta, cuda_event) + sizeof(void*);
}

constexpr const char* kMetaSize =
    "zh_frame_meta.struct_size is too small: set it to sizeof(zh_frame_meta) (or use ZH_FRAME_META_INIT)";

}  // namespace

extern "C" {

zh_status zh_publisher_create(const char* name, const zh_publisher_options* options, zh_publisher** publisher) {
  constexpr const char* fn = "zh_publisher_create";
  return guarded(fn, [&]() -> zh_status {
    if (!publisher) return fail(fn, ZH_ERR_INVALID_ARGUMENT, "publisher (the out-pointer) is NULL");
    *publisher = nullptr;
    if (!name) return fail(fn, ZH_ERR_INVALID_ARGUMENT, "name is NULL");
    if (!options) return fail(fn, ZH_ERR_INVALID_ARGUMENT, "options is NULL (start from ZH_PUBLISHER_OPTIONS_INIT)");
    if (options->struct_size < sizeof(zh_publisher_options))
      return fail(fn, ZH_ERR_INVALID_ARGUMENT,
                  "options.struct_size is too small: set it to sizeof(zh_publisher_options) (ZH_PUBLISHER_OPTIONS_INIT)");
    ShareOptions so;
    if (options->directory) so.directory = options->directory;
    if (options->max_readers) so.maxReaders = options->max_readers;
    if (options->lease_timeout_ms > 0) so.leaseTimeout = std::chrono::milliseconds(options->lease_timeout_ms);
    auto* h = new zh_publisher(std::make_unique<Publisher>(name, layoutFor(*options), std::move(so)));
    capi::publishers().add(h);
    *publisher = h;
    return ZH_OK;
  });
}

zh_status zh_publisher_close(zh_publisher* publisher) {
  constexpr const char* fn = "zh_publisher_close";
  if (!publisher) return ZH_OK;
  if (!capi::publishers().contains(publisher)) return badHandle(fn, "publisher");
  if (!publisher->owned)
    return fail(fn, ZH_ERR_INVALID_ARGUMENT, "this publisher belongs to a zh_stream: zh_stream_close() ends it");
  capi::publishers().take(publisher);
  return guarded(fn, [&] {
    delete publisher;
    return ZH_OK;
  });
}

zh_status zh_publisher_acquire(zh_publisher* publisher, zh_slot** slot) {
  constexpr const char* fn = "zh_publisher_acquire";
  if (!slot) return fail(fn, ZH_ERR_INVALID_ARGUMENT, "slot (the out-pointer) is NULL");
  *slot = nullptr;
  if (!capi::publishers().contains(publisher)) return badHandle(fn, "publisher");
  return guarded(fn, [&] {
    auto* h = publisher->input ? new zh_slot(publisher->input->acquireWrite(), publisher)
                               : new zh_slot(publisher->publisher->acquireWrite(), publisher);
    capi::slots().add(h);
    *slot = h;
    return ZH_OK;
  });
}

zh_status zh_slot_get_info(const zh_slot* slot, zh_frame_info* info) {
  constexpr const char* fn = "zh_slot_get_info";
  if (!capi::slots().contains(slot)) return badHandle(fn, "slot");
  if (!info) return fail(fn, ZH_ERR_INVALID_ARGUMENT, "info is NULL");
  if (info->struct_size < offsetof(zh_frame_info, cuda_event) + sizeof(void*))
    return fail(fn, ZH_ERR_INVALID_ARGUMENT, "info.struct_size is too small: set it to sizeof(zh_frame_info)");
  capi::describeFrame(const_cast<zh_slot*>(slot)->frame(), 0, 0, info);
  return ZH_OK;
}

zh_status zh_publisher_commit(zh_publisher* publisher, zh_slot* slot, const zh_frame_meta* meta, void* cuda_stream) {
  constexpr const char* fn = "zh_publisher_commit";
  if (!capi::slots().contains(slot)) return badHandle(fn, "slot");
  if (!capi::publishers().contains(publisher) || slot->owner != publisher) {
    // The slot is left alone: its own publisher may still commit it (or zh_slot_abandon it).
    return badHandle(fn, "publisher (the one that handed out this slot)");
  }
  capi::slots().take(slot);
  std::unique_ptr<zh_slot> owned(slot);  // the handle ends here, whatever happens
  if (!metaSized(meta)) return fail(fn, ZH_ERR_INVALID_ARGUMENT, kMetaSize);
  return guarded(fn, [&] {
    Frame m = metaFrame(meta);
    if (publisher->input && cuda_stream)
      publisher->input->commit(std::move(owned->inputSlot), m, cuda_stream);
    else if (publisher->input)
      publisher->input->commit(std::move(owned->inputSlot), m);
    else if (cuda_stream)
      publisher->publisher->commit(std::move(owned->slot), m, cuda_stream);
    else
      publisher->publisher->commit(std::move(owned->slot), m);
    return ZH_OK;
  });
}

zh_status zh_slot_abandon(zh_slot* slot) {
  constexpr const char* fn = "zh_slot_abandon";
  if (!slot) return ZH_OK;
  if (!capi::slots().take(slot)) return badHandle(fn, "slot");
  delete slot;  // ~WriteSlot abandons the write; never throws
  return ZH_OK;
}

zh_status zh_publisher_publish(zh_publisher* publisher, const zh_frame_info* frame, const zh_frame_meta* meta,
                               void* cuda_stream) {
  constexpr const char* fn = "zh_publisher_publish";
  if (!capi::publishers().contains(publisher)) return badHandle(fn, "publisher");
  if (!frame) return fail(fn, ZH_ERR_INVALID_ARGUMENT, "frame is NULL");
  if (frame->struct_size < offsetof(zh_frame_info, cuda_event) + sizeof(void*))
    return fail(fn, ZH_ERR_INVALID_ARGUMENT, "frame.struct_size is too small: set it to sizeof(zh_frame_info)");
  if (!metaSized(meta)) return fail(fn, ZH_ERR_INVALID_ARGUMENT, kMetaSize);
  return guarded(fn, [&]() -> zh_status {
    if (!knownFormat(frame->format))
      return fail(fn, ZH_ERR_INVALID_ARGUMENT, "frame.format " + std::to_string(frame->format) + " is not a zh_format");
    if (frame->plane_count > ZH_MAX_PLANES)
      return fail(fn, ZH_ERR_INVALID_ARGUMENT, "frame.plane_count " + std::to_string(frame->plane_count) + " > 3");
    if (frame->memory < ZH_MEMORY_HOST || frame->memory > ZH_MEMORY_DEVICE)
      return fail(fn, ZH_ERR_INVALID_ARGUMENT, "frame.memory is not a zh_memory");
    Frame f = metaFrame(meta);
    f.format = static_cast<PixelFormat>(frame->format);
    f.width = frame->width;
    f.height = frame->height;
    f.memory = static_cast<MemoryKind>(frame->memory);
    f.planeCount = frame->plane_count;
    for (std::size_t i = 0; i < frame->plane_count; ++i) {
      f.data[i] = static_cast<std::uint8_t*>(frame->planes[i]);
      f.pitch[i] = frame->pitches[i];
    }
    if (isCompressed(f.format)) {
      f.bytesUsed = frame->bytes_used;
      f.capacity = frame->bytes_used;
    }
    if (frame->cuda_event && !f.gpu.readyEvent) f.gpu.readyEvent = frame->cuda_event;
    f.gpu.device = frame->cuda_device;
    if (publisher->input && cuda_stream)
      publisher->input->publish(f, cuda_stream);
    else if (publisher->input)
      publisher->input->publish(f);
    else if (cuda_stream)
      publisher->publisher->publish(f, cuda_stream);
    else
      publisher->publisher->publish(f);
    return ZH_OK;
  });
}

zh_status zh_publisher_get_stats(zh_publisher* publisher, zh_publisher_stats* stats) {
  constexpr const char* fn = "zh_publisher_get_stats";
  if (!capi::publishers().contains(publisher)) return badHandle(fn, "publisher");
  if (!stats) return fail(fn, ZH_ERR_INVALID_ARGUMENT, "stats is NULL");
  if (stats->struct_size < sizeof(zh_publisher_stats))
    return fail(fn, ZH_ERR_INVALID_ARGUMENT, "stats.struct_size is too small: set it to sizeof(zh_publisher_stats)");
  return guarded(fn, [&] {
    if (publisher->input) {  // a stream's input: its one reader is the stream's pipeline
      const FrameInputStats s = publisher->input->stats();
      stats->readers_connected = 1;
      stats->publishes = s.committed;
      stats->overruns = 0;
      stats->bytes_copied = s.bytesCopied;
      return ZH_OK;
    }
    const ShareStats s = publisher->publisher->stats();
    stats->readers_connected = s.readersConnected;
    stats->publishes = s.publishes;
    stats->overruns = s.overruns;
    stats->bytes_copied = s.bytesCopied;
    return ZH_OK;
  });
}

}  // extern "C"
