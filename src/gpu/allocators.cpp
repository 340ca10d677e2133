// FrameAllocator implementations for pinned host and device memory, and HostRegistration.
#include <cuda_runtime_api.h>

#include <mutex>
#include <unordered_map>
#include <vector>

#include "gpu/cuda_check.hpp"
#include "gpu/cuda_handles.hpp"
#include "zerohop/error.hpp"
#include "zerohop/gpu.hpp"

namespace zerohop {
namespace {

constexpr std::size_t kAlign = 4096;

// The FrameAllocator contract is 4096-byte alignment; CUDA gives less (cudaMalloc: 256 bytes;
// cudaHostAlloc: page-aligned only for some sizes: on the H200's driver a small allocation after
// others came back at an offset inside a page). So each buffer is over-allocated by one page and
// the aligned pointer handed out is mapped back to the allocation here.
// Thread-safe: the map is guarded by a mutex.
class AlignedBases {
 public:
  void* add(void* base) {
    const auto addr = reinterpret_cast<std::uintptr_t>(base);
    void* aligned = reinterpret_cast<void*>((addr + kAlign - 1) & ~(std::uintptr_t{kAlign} - 1));
    std::lock_guard lock(mutex_);
    bases_.emplace(aligned, base);
    return aligned;
  }
  /// The allocation behind `aligned`, forgotten; nullptr when it is not one of ours.
  void* take(void* aligned) noexcept {
    std::lock_guard lock(mutex_);
    auto it = bases_.find(aligned);
    if (it == bases_.end()) return nullptr;
    void* base = it->second;
    bases_.erase(it);
    return base;
  }
  /// Every allocation still held (for a teardown), forgotten.
  std::vector<void*> takeAll() {
    std::lock_guard lock(mutex_);
    std::vector<void*> out;
    for (auto& [aligned, base] : bases_) out.push_back(base);
    bases_.clear();
    return out;
  }

 private:
  std::mutex mutex_;
  std::unordered_map<void*, void*> bases_;
};

class PinnedAllocator final : public FrameAllocator {
 public:
  explicit PinnedAllocator(int device) : device_(device), flags_(pinnedAllocFlags(device)) {}
  MemoryKind kind() const noexcept override { return MemoryKind::kPinned; }
  void* allocate(std::size_t bytes) override {
    cuda::DeviceGuard guard(device_);
    void* base = nullptr;
    cuda::check(cudaHostAlloc(&base, bytes + kAlign, flags_), "cudaHostAlloc", std::to_string(bytes) + " bytes");
    return bases_.add(base);
  }
  void deallocate(void* ptr, std::size_t) noexcept override {
    if (void* base = ptr ? bases_.take(ptr) : nullptr) cuda::logIfFailed(cudaFreeHost(base), "cudaFreeHost");
  }

 private:
  int device_;
  unsigned flags_;
  AlignedBases bases_;
};

// Device memory, aligned as above (AlignedBases). Thread-safe.
class DeviceAllocator final : public FrameAllocator {
 public:
  explicit DeviceAllocator(int device) : device_(device) {
    cuda::DeviceGuard guard(device);  // validates the device now rather than at the first allocate
  }
  ~DeviceAllocator() override {
    const std::vector<void*> left = bases_.takeAll();
    if (!left.empty()) {
      cuda::DeviceGuard guard(device_);
      for (void* base : left) cuda::logIfFailed(cudaFree(base), "cudaFree (allocator teardown)");
    }
  }
  MemoryKind kind() const noexcept override { return MemoryKind::kDevice; }
  void* allocate(std::size_t bytes) override {
    cuda::DeviceGuard guard(device_);
    void* base = nullptr;
    cuda::check(cudaMalloc(&base, bytes + kAlign), "cudaMalloc",
                std::to_string(bytes) + " bytes on device " + std::to_string(device_));
    return bases_.add(base);
  }
  void deallocate(void* ptr, std::size_t) noexcept override {
    void* base = ptr ? bases_.take(ptr) : nullptr;
    if (!base) return;
    int previous = -1;
    const bool switched = cudaGetDevice(&previous) == cudaSuccess && previous != device_ &&
                          cudaSetDevice(device_) == cudaSuccess;
    cuda::logIfFailed(cudaFree(base), "cudaFree");
    if (switched) cuda::logIfFailed(cudaSetDevice(previous), "cudaSetDevice (restore)");
  }

 private:
  int device_;
  AlignedBases bases_;
};

}  // namespace

std::unique_ptr<FrameAllocator> makePinnedAllocator(int device) { return std::make_unique<PinnedAllocator>(device); }
std::unique_ptr<FrameAllocator> makeDeviceAllocator(int device) { return std::make_unique<DeviceAllocator>(device); }

HostRegistration::HostRegistration(void* ptr, std::size_t bytes, int device) {
  if (!ptr || bytes == 0) throw Error(Errc::kInvalidArgument, "HostRegistration: null pointer or zero size");
  cuda::DeviceGuard guard(device);
  int canMap = 0;
  cuda::check(cudaDeviceGetAttribute(&canMap, cudaDevAttrCanMapHostMemory, device),
              "cudaDeviceGetAttribute(cudaDevAttrCanMapHostMemory)");
  const unsigned flags = cudaHostRegisterPortable | (canMap ? cudaHostRegisterMapped : 0u);
  cuda::check(cudaHostRegister(ptr, bytes, flags), "cudaHostRegister", std::to_string(bytes) + " bytes");
  ptr_ = ptr;
  bytes_ = bytes;
  mapped_ = canMap != 0;
}

HostRegistration::~HostRegistration() { reset(); }

HostRegistration::HostRegistration(HostRegistration&& other) noexcept { *this = std::move(other); }

HostRegistration& HostRegistration::operator=(HostRegistration&& other) noexcept {
  if (this != &other) {
    reset();
    ptr_ = std::exchange(other.ptr_, nullptr);
    bytes_ = std::exchange(other.bytes_, 0);
    mapped_ = std::exchange(other.mapped_, false);
  }
  return *this;
}

void HostRegistration::reset() noexcept {
  if (!ptr_) return;
  cuda::logIfFailed(cudaHostUnregister(ptr_), "cudaHostUnregister");
  ptr_ = nullptr;
  bytes_ = 0;
  mapped_ = false;
}

}  // namespace zerohop
