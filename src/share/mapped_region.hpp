#pragma once
// Move-only owner of one mmap() of a shared-memory file (control block, slots, lease page).
// Thread-safety: thread-bound value; the mapped bytes themselves are shared and accessed with atomics.

#include <cstddef>
#include <cstdint>
#include <utility>

namespace zerohop::share_detail {

class MappedRegion {
 public:
  MappedRegion() noexcept = default;
  /// Maps `bytes` of `fd` MAP_SHARED, read-only unless `writable`. Throws Error naming mmap and errno.
  static MappedRegion map(int fd, std::size_t bytes, bool writable, const char* what);
  MappedRegion(const MappedRegion&) = delete;
  MappedRegion& operator=(const MappedRegion&) = delete;
  MappedRegion(MappedRegion&& other) noexcept
      : base_(std::exchange(other.base_, nullptr)), size_(std::exchange(other.size_, 0)) {}
  MappedRegion& operator=(MappedRegion&& other) noexcept {
    if (this != &other) {
      reset();
      base_ = std::exchange(other.base_, nullptr);
      size_ = std::exchange(other.size_, 0);
    }
    return *this;
  }
  ~MappedRegion() { reset(); }

  std::uint8_t* data() const noexcept { return static_cast<std::uint8_t*>(base_); }
  std::size_t size() const noexcept { return size_; }
  explicit operator bool() const noexcept { return base_ != nullptr; }
  /// Unmaps now (idempotent); failures are logged, never thrown.
  void reset() noexcept;

 private:
  void* base_ = nullptr;
  std::size_t size_ = 0;
};

}  // namespace zerohop::share_detail
