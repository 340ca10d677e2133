#pragma once
// The V4L2 capture queue of one open camera: its buffers (MMAP mappings or USERPTR memory from a
// FrameAllocator), streaming on/off, dequeue, and re-queue when a FrameLease is released.
// It is the SlotOwner of every lease the source hands out, so it (the fd, the mappings, the
// USERPTR memory) outlives the last lease. Tear-down order: STREAMOFF, munmap, REQBUFS(0), free
// USERPTR memory, close.
// Thread-safety: thread-safe. dequeue() runs on the capture thread; releaseSlot() on any thread.

#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <vector>

#include "capture/v4l2_device.hpp"
#include "zerohop/buffer_pool.hpp"
#include "zerohop/frame.hpp"

namespace zerohop::capture_detail {

enum class CaptureMemory { kMmap, kUserptr };
const char* captureMemoryName(CaptureMemory memory) noexcept;

/// One dequeued buffer as the driver described it.
struct DequeuedBuffer {
  std::uint32_t index = 0;
  std::uint32_t bytesUsed = 0;
  std::uint32_t flags = 0;     ///< V4L2_BUF_FLAG_*
  std::uint32_t sequence = 0;  ///< the driver's 32-bit sequence
  std::int64_t timestampNs = 0;
  bool monotonic = false;  ///< timestamp is CLOCK_MONOTONIC
  bool error = false;      ///< V4L2_BUF_FLAG_ERROR
  bool keyframe = false;   ///< V4L2_BUF_FLAG_KEYFRAME (compressed streams with inter frames)
};

class CaptureQueue final : public SlotOwner {
 public:
  /// Requests `count` buffers of at least `bufferBytes` each (REQBUFS), maps (MMAP) or allocates
  /// (USERPTR, with `allocator`) them. Throws Error; kUnsupported when the driver refuses `memory`.
  CaptureQueue(V4l2Device device, CaptureMemory memory, std::uint32_t count, std::size_t bufferBytes,
               std::unique_ptr<FrameAllocator> allocator);
  ~CaptureQueue() override;
  CaptureQueue(const CaptureQueue&) = delete;
  CaptureQueue& operator=(const CaptureQueue&) = delete;

  /// Queues every buffer and starts streaming. Throws Error.
  void start();
  /// Stops streaming (idempotent, never throws); buffers stay mapped for leases still alive.
  void stop() noexcept;

  /// DQBUF; nullopt when no buffer is ready (EAGAIN). Throws Error (kUnavailable when unplugged).
  std::optional<DequeuedBuffer> dequeue();
  /// QBUF of `index` now (used for buffers the source rejects). Throws Error.
  void requeue(std::uint32_t index);
  /// SlotOwner: the lease is done; QBUF it if still streaming. Logs, never throws.
  void releaseSlot(std::uint32_t slot) noexcept override;

  const V4l2Device& device() const noexcept { return device_; }
  CaptureMemory memory() const noexcept { return memory_; }
  MemoryKind memoryKind() const noexcept;
  std::uint32_t bufferCount() const noexcept { return static_cast<std::uint32_t>(buffers_.size()); }
  std::uint8_t* data(std::uint32_t index) const noexcept { return buffers_[index].data; }
  std::size_t capacity(std::uint32_t index) const noexcept { return buffers_[index].length; }

 private:
  struct Buffer {
    std::uint8_t* data = nullptr;
    std::size_t length = 0;
  };
  void queue(std::uint32_t index);
  void releaseBuffers() noexcept;

  V4l2Device device_;
  CaptureMemory memory_;
  std::unique_ptr<FrameAllocator> allocator_;
  std::vector<Buffer> buffers_;
  std::mutex mutex_;  // guards streaming_ against a concurrent release
  bool streaming_ = false;
  bool requested_ = false;
};

}  // namespace zerohop::capture_detail
