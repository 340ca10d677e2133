#pragma once
// Internal: CUDA VMM memory shared as a POSIX file descriptor (Transport::kCudaVmmFd).
//   VmmExport   cuMemCreate(CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR) + cuMemAddressReserve + cuMemMap +
//               cuMemSetAccess(read-write, the owning device) + cuMemExportToShareableHandle -> fd
//   VmmImport   cuMemImportFromShareableHandle(fd) + cuMemAddressReserve + cuMemMap + cuMemSetAccess
//               (read-only where the driver allows it, else read-write)
// The driver API is reached through cudaGetDriverEntryPointByVersion (no link against libcuda, so
// programs still start where there is no driver). The physical memory is reference-counted by the
// driver: it lives until the exporter and every importer released their handles and mappings.
// Constructors throw zerohop::Error naming the failing call; destructors log and never throw.
// Thread-safety: each object is thread-bound while built; afterwards immutable.

#include <cstddef>
#include <cstdint>
#include <string>
#include <utility>

#include "core/unique_fd.hpp"

namespace zerohop::share_detail {

/// Why this device cannot export VMM POSIX fds ("" when it can). Never throws.
std::string vmmUnsupportedReason(int device);

/// Grants CUDA device `device` access to `bytes` of a mapping at `pointer` (cuMemSetAccess for that
/// device alone: the others keep theirs): read-only when `readOnly` and the driver allows it, else
/// read-write. False with the driver's error in `why`. Never throws.
bool grantVmmAccess(unsigned long long pointer, std::size_t bytes, int device, bool readOnly, std::string& why);

/// A VMM allocation handle with its reserved address range and mapping, released in reverse order
/// (cuMemUnmap, cuMemAddressFree, cuMemRelease). The part VmmExport and VmmImport share.
class VmmMapping {
 public:
  VmmMapping() = default;
  ~VmmMapping() { reset(); }
  VmmMapping(VmmMapping&& o) noexcept { *this = std::move(o); }
  VmmMapping& operator=(VmmMapping&& o) noexcept;
  VmmMapping(const VmmMapping&) = delete;
  VmmMapping& operator=(const VmmMapping&) = delete;

  /// Takes `handle` (a CUmemGenericAllocationHandle, released by reset()) and maps `bytes` of it
  /// at a fresh address range aligned to `alignment`. Throws kDevice; keeps what it took for reset().
  void map(unsigned long long handle, std::size_t bytes, std::size_t alignment);
  std::uint8_t* data() const noexcept { return reinterpret_cast<std::uint8_t*>(ptr_); }
  unsigned long long pointer() const noexcept { return ptr_; }
  std::size_t size() const noexcept { return size_; }
  void reset() noexcept;

 private:
  unsigned long long handle_ = 0;  // CUmemGenericAllocationHandle
  unsigned long long ptr_ = 0;     // CUdeviceptr
  std::size_t size_ = 0;
  bool mapped_ = false;
};

class VmmExport {
 public:
  VmmExport() = default;
  /// At least `bytes` (rounded up to the allocation granularity) on CUDA device `device`.
  VmmExport(int device, std::size_t bytes);

  std::uint8_t* data() const noexcept { return mapping_.data(); }
  std::size_t size() const noexcept { return mapping_.size(); }
  int fd() const noexcept { return fd_.get(); }  ///< the shareable handle (owned here)
  /// In-process readers on another GPU: that GPU may read (and write) the slots too.
  bool grantAccess(int device, std::string& why) const {
    return grantVmmAccess(mapping_.pointer(), mapping_.size(), device, false, why);
  }

 private:
  VmmMapping mapping_;
  UniqueFd fd_;  // closed first
};

class VmmImport {
 public:
  VmmImport() = default;
  /// Maps `bytes` of the allocation behind `fd` (a VmmExport's fd received over SCM_RIGHTS).
  VmmImport(int device, int fd, std::size_t bytes);

  std::uint8_t* data() const noexcept { return mapping_.data(); }
  bool readOnly() const noexcept { return readOnly_; }
  /// A reader on another GPU: that GPU may read this mapping too (peer access).
  bool grantAccess(int device, std::string& why) const {
    return grantVmmAccess(mapping_.pointer(), bytes_, device, true, why);
  }

 private:
  VmmMapping mapping_;
  std::size_t bytes_ = 0;
  bool readOnly_ = false;
};

}  // namespace zerohop::share_detail
