#include "zerohop/buffer_pool.hpp"

#include <cstdlib>
#include <mutex>
#include <new>
#include <vector>

#include "zerohop/error.hpp"

namespace zerohop {
namespace {

class HostAllocator final : public FrameAllocator {
 public:
  MemoryKind kind() const noexcept override { return MemoryKind::kHost; }
  void* allocate(std::size_t bytes) override {
    const std::size_t rounded = (bytes + 4095) & ~std::size_t{4095};
    void* p = std::aligned_alloc(4096, rounded);
    if (!p) throw Error(Errc::kUnavailable, "aligned_alloc(" + std::to_string(bytes) + ") failed: out of memory");
    return p;
  }
  void deallocate(void* ptr, std::size_t) noexcept override { std::free(ptr); }
};

}  // namespace

std::unique_ptr<FrameAllocator> makeHostAllocator() { return std::make_unique<HostAllocator>(); }

// The part of the pool that leases keep alive. Owns the storage; frees it only when the pool and
// every lease are gone.
class BufferPool::Core final : public SlotOwner {
 public:
  Core(const ImageLayout& layout, std::uint32_t slots, std::unique_ptr<FrameAllocator> allocator)
      : layout_(layout), allocator_(std::move(allocator)) {
    if (slots == 0) throw Error(Errc::kInvalidArgument, "a buffer pool needs at least one slot");
    if (!allocator_) throw Error(Errc::kInvalidArgument, "buffer pool: null allocator");
    buffers_.reserve(slots);
    free_.reserve(slots);
    try {
      for (std::uint32_t i = 0; i < slots; ++i) {
        buffers_.push_back(static_cast<std::uint8_t*>(allocator_->allocate(layout_.totalBytes)));
        free_.push_back(slots - 1 - i);
      }
    } catch (...) {
      freeAll();
      throw;
    }
  }
  ~Core() override { freeAll(); }

  void releaseSlot(std::uint32_t slot) noexcept override {
    std::lock_guard lock(mutex_);
    free_.push_back(slot);
  }

  std::optional<std::uint32_t> take() {
    std::lock_guard lock(mutex_);
    if (free_.empty()) {
      ++exhausted_;
      return std::nullopt;
    }
    const auto slot = free_.back();
    free_.pop_back();
    return slot;
  }

  PoolStats stats() const {
    std::lock_guard lock(mutex_);
    return PoolStats{static_cast<std::uint32_t>(buffers_.size()), static_cast<std::uint32_t>(free_.size()),
                     exhausted_};
  }

  const ImageLayout& layout() const noexcept { return layout_; }
  MemoryKind kind() const noexcept { return allocator_->kind(); }
  std::uint8_t* buffer(std::uint32_t slot) const noexcept { return buffers_[slot]; }

 private:
  void freeAll() noexcept {
    for (auto* b : buffers_) allocator_->deallocate(b, layout_.totalBytes);
    buffers_.clear();
  }

  ImageLayout layout_;
  std::unique_ptr<FrameAllocator> allocator_;
  std::vector<std::uint8_t*> buffers_;
  mutable std::mutex mutex_;
  std::vector<std::uint32_t> free_;
  std::uint64_t exhausted_ = 0;
};

BufferPool::BufferPool(const ImageLayout& layout, std::uint32_t slots, std::unique_ptr<FrameAllocator> allocator)
    : core_(std::make_shared<Core>(layout, slots, std::move(allocator))) {}

BufferPool::~BufferPool() = default;

std::optional<FrameLease> BufferPool::tryAcquire() {
  auto slot = core_->take();
  if (!slot) return std::nullopt;
  Frame frame;
  bindLayout(frame, core_->layout(), core_->buffer(*slot), core_->kind());
  return FrameLease(core_, *slot, frame);
}

PoolStats BufferPool::stats() const { return core_->stats(); }
const ImageLayout& BufferPool::layout() const noexcept { return core_->layout(); }
MemoryKind BufferPool::memoryKind() const noexcept { return core_->kind(); }

}  // namespace zerohop
