#pragma once
// FrameInput: a source object for frames your program makes (a renderer, your own capture, a
// decoder), handed to a Pipeline in this process: no share, no directory, no IPC. FrameStream uses
// one; a program may also give one to a Pipeline itself (PipelineConfig::openSource).
//
//   your thread: acquireWrite() -> fill the slot -> commit()    (or publish(): one copy in)
//        -> [input queue: `slots` deep, drop oldest] -> the pipeline's capture thread: next()
//        -> convert / encode -> the lease ends -> the slot is free for acquireWrite() again
//
// A slot is a lease on the input's pool: committing hands it to the pipeline, which gives it back
// when it is done with the frame. Your thread never waits for the encoder: past `slots` queued frames
// the oldest is dropped (counted in the source's drops). acquireWrite() takes a free slot, else the
// oldest queued frame's (a drop); it waits (bounded) only while every slot is in your hands or the
// pipeline's. Device frames keep their GPU ordering: each slot has a CUDA event recorded after your
// write (on your stream, or after your readyEvent), and the pipeline's stream waits on it.
// Thread-safety: thread-safe (acquire, commit and publish from any thread). An InputSlot is
// thread-bound while filled. Lifetime: destroying the FrameInput closes it (the source then gives no
// more frames); the pool lives until the source and the last frame the pipeline holds are gone.

#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <utility>

#include "zerohop/export.h"
#include "zerohop/frame.hpp"
#include "zerohop/source.hpp"

namespace zerohop {

class FrameInputCore;  // src/source/frame_input.cpp

struct FrameInputConfig {
  PixelFormat format = PixelFormat::kNV12;  ///< a raw format (NV12, I420, RGBA, BGRx, YUYV, UYVY, RGB24)
  std::uint32_t width = 1280;
  std::uint32_t height = 720;
  double fps = 30;  ///< the rate you push at (the encoder's rate control and pacing need it)
  ColorDesc color{};
  /// kHost: slots in host memory (page-locked where the pipeline takes the GPU path). kDevice: in
  /// GPU memory of `cudaDevice` (a build with CUDA; the GPU path).
  MemoryKind memory = MemoryKind::kHost;
  int cudaDevice = 0;
  std::uint32_t slots = 4;  ///< frames that may wait for the pipeline; the oldest is dropped past that
  /// How long acquireWrite() waits when every slot is held (by you, uncommitted, or by the pipeline).
  std::chrono::milliseconds acquireTimeout{1000};
  std::string name = "your frames";  ///< how the source describes itself (logs, /stats)
};

struct FrameInputStats {
  std::uint64_t committed = 0;  ///< frames committed or published
  std::uint64_t dropped = 0;    ///< committed frames the pipeline never took (drop-oldest)
  std::uint32_t slots = 0;      ///< slots in the pool
  std::uint64_t bytesCopied = 0;  ///< payload bytes publish() copied in (in-place commits copy none)
};

/// A slot of a FrameInput's pool, handed out for writing in place (acquire -> fill -> commit).
/// Dropping it without commit gives the slot back. Move-only.
class ZEROHOP_API InputSlot {
 public:
  InputSlot() = default;
  InputSlot(InputSlot&&) noexcept = default;
  InputSlot& operator=(InputSlot&&) noexcept = default;
  /// The slot bound to the input's layout (data/pitch/capacity; device pointers for kDevice slots).
  Frame& frame() noexcept { return lease_.frame(); }
  explicit operator bool() const noexcept { return static_cast<bool>(lease_); }

 private:
  friend class FrameInputCore;
  InputSlot(FrameLease lease, const void* input) noexcept : lease_(std::move(lease)), input_(input) {}
  FrameLease lease_;
  const void* input_ = nullptr;  // the FrameInput's core that handed it out (compared, never dereferenced)
};

class ZEROHOP_API FrameInput {
 public:
  /// Checks the layout (Error kInvalidArgument: a compressed format, fps outside (0, 240], a memory
  /// kind other than kHost/kDevice). The pool is made when a pipeline opens the source.
  explicit FrameInput(const FrameInputConfig& config);
  /// Closes the input: the source's next() returns nothing from then on. The pool stays until the
  /// frames the pipeline holds are given back.
  ~FrameInput();
  FrameInput(const FrameInput&) = delete;
  FrameInput& operator=(const FrameInput&) = delete;

  /// A free slot to write in place. Throws Error: kUnavailable when no pipeline opened the source
  /// yet, or every slot stayed held for acquireTimeout (commit or drop the slots you acquired).
  InputSlot acquireWrite();
  /// Queues `slot` with the metadata of `meta` (sequence, wallClockMs, times, color, keyframe; its
  /// data pointers are ignored; capture time and wall clock default to now). Device slots:
  /// `meta.gpu.readyEvent` (a cudaEvent_t recorded after your write) is required; the slot's event
  /// is recorded after it. Throws kInvalidArgument for an empty or foreign slot, or a device commit
  /// without readyEvent (the slot is then given back).
  void commit(InputSlot&& slot, const Frame& meta);
  /// Device slots: the slot's event is recorded on `cudaStream` (the cudaStream_t that wrote it; no
  /// host wait). Host slots ignore the stream.
  void commit(InputSlot&& slot, const Frame& meta, void* cudaStream);
  /// Copies a frame of yours into a slot and queues it (format and size must match; host or pinned
  /// frames into host slots, any frame into device slots, ordered after frame.gpu.readyEvent when
  /// set; the host waits for that copy). Throws kInvalidArgument on a mismatch.
  void publish(const Frame& frame);
  /// Device slots: the copy and the slot's event go on `cudaStream`, with no host wait.
  void publish(const Frame& frame, void* cudaStream);

  FrameInputStats stats() const;

  /// The FrameSource that reads this input, for PipelineConfig::openSource: makes the pool (with
  /// `options.allocatorFactory` for host slots, so the GPU path gets page-locked memory). Once per
  /// input (Error kInvalidArgument after).
  std::unique_ptr<FrameSource> openSource(const SourceOptions& options);

 private:
  std::shared_ptr<FrameInputCore> core_;
};

}  // namespace zerohop
