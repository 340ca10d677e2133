#pragma once
// The frame descriptor every stage passes along, and the move-only lease that keeps its storage alive.
//
// A Frame never owns memory: it describes pixels that live in a slot of some pool (a host buffer
// pool, a pinned pool the camera fills through V4L2 USERPTR, a V4L2 MMAP buffer, a device pool,
// a slot of a shared frame ring). A FrameLease is the right to use one slot; destroying the lease
// gives the slot back to whoever owns it (free list, VIDIOC_QBUF, ring reader release).
// Thread-safety: Frame is a value type. A FrameLease is thread-bound while used but may be moved
// to another thread; release happens on the thread that destroys it and the owner's release is thread-safe.

#include <array>
#include <cstddef>
#include <cstdint>
#include <memory>

#include "zerohop/export.h"
#include "zerohop/pixel_format.hpp"

namespace zerohop {

/// Where the bytes of a frame are.
enum class MemoryKind : std::uint8_t {
  kHost,    ///< ordinary (pageable) host memory
  kPinned,  ///< page-locked host memory the GPU can DMA from (cudaHostAlloc / cudaHostRegister)
  kDevice,  ///< GPU memory (device pointer; never dereference on the host)
};
ZEROHOP_API const char* memoryKindName(MemoryKind kind) noexcept;

/// The pipeline stages a frame passes through; each stamps CLOCK_MONOTONIC ns when it is done.
enum class Stage : std::uint8_t {
  kCapture = 0,  ///< the camera (driver timestamp) or test pattern produced the frame
  kIngest,       ///< the frame is where the next stage can read it (dequeued; in VRAM on the GPU path)
  kConvert,      ///< decoded / colour-converted into the encoder's input format
  kEncode,       ///< encoded access unit is ready
  kSend,         ///< handed to the WebRTC sender (packetiser)
  kCount
};
inline constexpr std::size_t kStageCount = static_cast<std::size_t>(Stage::kCount);
ZEROHOP_API const char* stageName(Stage stage) noexcept;

/// Per-stage completion times, CLOCK_MONOTONIC ns; 0 = not reached.
struct StageTimes {
  std::array<std::int64_t, kStageCount> ns{};
  void mark(Stage s, std::int64_t t) noexcept { ns[static_cast<std::size_t>(s)] = t; }
  std::int64_t at(Stage s) const noexcept { return ns[static_cast<std::size_t>(s)]; }
};

/// GPU ordering that travels with a frame: the producer recorded `readyEvent` (a
/// cudaEvent_t) on its stream after writing the pixels; consumers cudaStreamWaitEvent on their
/// own stream. Opaque here so public headers carry no CUDA types. Null on the CPU path.
struct GpuSync {
  void* readyEvent = nullptr;
  int device = -1;
};

/// Describes one image (or one compressed unit) somewhere in memory. Does not own it.
struct Frame {
  PixelFormat format = PixelFormat::kUnknown;
  std::uint32_t width = 0;
  std::uint32_t height = 0;
  ColorDesc color{};
  MemoryKind memory = MemoryKind::kHost;
  std::uint32_t planeCount = 0;
  std::array<std::uint8_t*, kMaxPlanes> data{};  ///< plane pointers (device pointers for kDevice)
  std::array<std::uint32_t, kMaxPlanes> pitch{};
  std::size_t bytesUsed = 0;  ///< payload size (the compressed size for MJPEG/H.264)
  std::size_t capacity = 0;   ///< bytes available in the slot
  std::uint64_t sequence = 0;  ///< source sequence number; gaps are drops
  std::int64_t wallClockMs = 0;  ///< CLOCK_REALTIME ms at capture (the value the timecode carries)
  bool keyframe = false;         ///< for compressed formats: an IDR / self-contained frame
  StageTimes times{};
  GpuSync gpu{};

  std::int64_t captureNs() const noexcept { return times.at(Stage::kCapture); }
};

/// Fills data/pitch/planeCount/capacity of `frame` from `layout` for a buffer at `base`.
ZEROHOP_API void bindLayout(Frame& frame, const ImageLayout& layout, std::uint8_t* base, MemoryKind memory) noexcept;

/// Something that lends slots out and takes them back (a BufferPool, a V4L2 capture queue, a share ring).
class ZEROHOP_API SlotOwner {
 public:
  virtual ~SlotOwner() = default;
  /// Gives slot `slot` back. Must be thread-safe and must not throw.
  virtual void releaseSlot(std::uint32_t slot) noexcept = 0;
};

/// Move-only right to use one slot. Keeps the owner alive (shared ownership of the owner's core),
/// so storage is never freed under a live lease, even if the pool object itself is gone.
class ZEROHOP_API FrameLease {
 public:
  FrameLease() = default;
  FrameLease(std::shared_ptr<SlotOwner> owner, std::uint32_t slot, const Frame& frame) noexcept
      : owner_(std::move(owner)), slot_(slot), frame_(frame) {}
  FrameLease(const FrameLease&) = delete;
  FrameLease& operator=(const FrameLease&) = delete;
  FrameLease(FrameLease&& other) noexcept { *this = std::move(other); }
  FrameLease& operator=(FrameLease&& other) noexcept {
    if (this != &other) {
      reset();
      owner_ = std::move(other.owner_);
      slot_ = other.slot_;
      frame_ = other.frame_;
      other.owner_.reset();
    }
    return *this;
  }
  ~FrameLease() { reset(); }

  /// Gives the slot back now (idempotent).
  void reset() noexcept {
    if (owner_) {
      auto owner = std::move(owner_);
      owner_.reset();
      owner->releaseSlot(slot_);
    }
  }
  explicit operator bool() const noexcept { return static_cast<bool>(owner_); }
  Frame& frame() noexcept { return frame_; }
  const Frame& frame() const noexcept { return frame_; }
  Frame* operator->() noexcept { return &frame_; }
  const Frame* operator->() const noexcept { return &frame_; }
  std::uint32_t slot() const noexcept { return slot_; }

 private:
  std::shared_ptr<SlotOwner> owner_;
  std::uint32_t slot_ = 0;
  Frame frame_{};
};

}  // namespace zerohop
