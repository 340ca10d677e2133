#pragma once
// A fixed set of equally sized frame buffers lent out as FrameLeases.
// Thread-safety: thread-safe (acquire from one thread, release from any).

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>

#include "zerohop/export.h"
#include "zerohop/frame.hpp"

namespace zerohop {

/// Allocates the storage behind a pool. The GPU module supplies pinned and device allocators;
/// the V4L2 USERPTR path uses the same interface so the camera fills memory the GPU can DMA from.
class ZEROHOP_API FrameAllocator {
 public:
  virtual ~FrameAllocator() = default;
  virtual MemoryKind kind() const noexcept = 0;
  /// Returns `bytes` of storage aligned to at least 4096 bytes; throws Error on failure.
  virtual void* allocate(std::size_t bytes) = 0;
  virtual void deallocate(void* ptr, std::size_t bytes) noexcept = 0;
};

/// Page-aligned ordinary host memory.
ZEROHOP_API std::unique_ptr<FrameAllocator> makeHostAllocator();

struct PoolStats {
  std::uint32_t slots = 0;
  std::uint32_t free = 0;
  std::uint64_t exhausted = 0;  ///< acquire() calls that found no free slot
};

class ZEROHOP_API BufferPool {
 public:
  /// Allocates `slots` buffers laid out as `layout`. Throws Error on allocation failure.
  BufferPool(const ImageLayout& layout, std::uint32_t slots, std::unique_ptr<FrameAllocator> allocator);
  ~BufferPool();
  BufferPool(const BufferPool&) = delete;
  BufferPool& operator=(const BufferPool&) = delete;
  BufferPool(BufferPool&&) noexcept = default;
  BufferPool& operator=(BufferPool&&) noexcept = default;

  /// A free slot with its Frame bound to the layout, or nullopt when all are leased (never blocks:
  /// a live source drops the frame and counts it).
  std::optional<FrameLease> tryAcquire();
  PoolStats stats() const;
  const ImageLayout& layout() const noexcept;
  MemoryKind memoryKind() const noexcept;

 private:
  class Core;
  std::shared_ptr<Core> core_;
};

}  // namespace zerohop
