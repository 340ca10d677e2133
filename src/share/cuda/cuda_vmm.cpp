#include "share/cuda/cuda_vmm.hpp"

#include <cuda.h>
#include <cuda_runtime_api.h>

#include <cstdint>
#include <utility>

#include "gpu/cuda_check.hpp"
#include "gpu/driver_entry.hpp"
#include "zerohop/error.hpp"
#include "zerohop/log.hpp"

namespace zerohop::share_detail {
namespace {

// The driver entry points we use, resolved once through the runtime (no link against libcuda). Each
// member resolves itself in its initializer, so an entry point is named in one place; `missing` is
// declared first, so it exists before any of them.
struct DriverApi {
  std::string missing;  // the first entry point that could not be resolved

  /// What resolve() found: converts to the function-pointer type it initialises (null if unresolved).
  struct EntryPoint {
    void* address;
    template <typename Fn>
    operator Fn*() const noexcept {  // implicit: the member it initialises names the type
      return reinterpret_cast<Fn*>(address);
    }
  };
  EntryPoint resolve(const char* symbol) {
    void* p = cuda::driverEntryPoint(symbol);
    if (p == nullptr && missing.empty()) missing = symbol;
    return {p};
  }

  decltype(&cuDeviceGet) deviceGet = resolve("cuDeviceGet");
  decltype(&cuDeviceGetAttribute) deviceGetAttribute = resolve("cuDeviceGetAttribute");
  decltype(&cuMemGetAllocationGranularity) getGranularity = resolve("cuMemGetAllocationGranularity");
  decltype(&cuMemCreate) create = resolve("cuMemCreate");
  decltype(&cuMemRelease) release = resolve("cuMemRelease");
  decltype(&cuMemAddressReserve) reserve = resolve("cuMemAddressReserve");
  decltype(&cuMemAddressFree) addressFree = resolve("cuMemAddressFree");
  decltype(&cuMemMap) map = resolve("cuMemMap");
  decltype(&cuMemUnmap) unmap = resolve("cuMemUnmap");
  decltype(&cuMemSetAccess) setAccess = resolve("cuMemSetAccess");
  decltype(&cuMemExportToShareableHandle) exportHandle = resolve("cuMemExportToShareableHandle");
  decltype(&cuMemImportFromShareableHandle) importHandle = resolve("cuMemImportFromShareableHandle");
};

const DriverApi& driver() {
  static const DriverApi api;
  return api;
}

void checkCu(CUresult r, const char* call) {
  if (r != CUDA_SUCCESS) throw Error(Errc::kDevice, std::string(call) + ": " + cuda::driverErrorName(r));
}

void logIfFailed(CUresult r, const char* call) noexcept {
  if (r != CUDA_SUCCESS) log::warn("share: ", call, " failed: ", cuda::driverErrorName(r));
}

const DriverApi& requireDriver() {
  const DriverApi& api = driver();
  if (!api.missing.empty())
    throw Error(Errc::kUnsupported, "CUDA driver entry point " + api.missing + " is not available");
  return api;
}

CUmemAllocationProp allocationProp(int device) {
  CUmemAllocationProp prop{};
  prop.type = CU_MEM_ALLOCATION_TYPE_PINNED;
  prop.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
  prop.location.id = device;
  prop.requestedHandleTypes = CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR;
  return prop;
}

/// Access `flags` for CUDA device `device`.
CUmemAccessDesc accessFor(int device, CUmemAccess_flags flags) {
  CUmemAccessDesc access{};
  access.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
  access.location.id = device;
  access.flags = flags;
  return access;
}

std::size_t granularity(const DriverApi& api, int device) {
  CUmemAllocationProp prop = allocationProp(device);
  std::size_t g = 0;
  checkCu(api.getGranularity(&g, &prop, CU_MEM_ALLOC_GRANULARITY_MINIMUM), "cuMemGetAllocationGranularity");
  return g == 0 ? 2u << 20 : g;
}

}  // namespace

std::string vmmUnsupportedReason(int device) {
  try {
    const DriverApi& api = driver();
    if (!api.missing.empty()) return "CUDA driver entry point " + api.missing + " is not available";
    cuda::DeviceGuard guard(device);
    cuda::check(cudaFree(nullptr), "cudaFree(nullptr) (context)");
    CUdevice dev = 0;
    checkCu(api.deviceGet(&dev, device), "cuDeviceGet");
    int vmm = 0, fd = 0;
    checkCu(api.deviceGetAttribute(&vmm, CU_DEVICE_ATTRIBUTE_VIRTUAL_MEMORY_MANAGEMENT_SUPPORTED, dev),
            "cuDeviceGetAttribute(VIRTUAL_MEMORY_MANAGEMENT_SUPPORTED)");
    checkCu(api.deviceGetAttribute(&fd, CU_DEVICE_ATTRIBUTE_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR_SUPPORTED, dev),
            "cuDeviceGetAttribute(HANDLE_TYPE_POSIX_FILE_DESCRIPTOR_SUPPORTED)");
    if (!vmm) return "the device does not support CUDA virtual memory management";
    if (!fd) return "the driver cannot export CUDA memory as POSIX file descriptors";
    return {};
  } catch (const std::exception& e) {
    return e.what();
  }
}

bool grantVmmAccess(unsigned long long pointer, std::size_t bytes, int device, bool readOnly, std::string& why) {
  const DriverApi& api = driver();
  if (!api.missing.empty()) {
    why = "CUDA driver entry point " + api.missing + " is not available";
    return false;
  }
  const CUmemAccessDesc ro = accessFor(device, CU_MEM_ACCESS_FLAGS_PROT_READ);
  const CUmemAccessDesc rw = accessFor(device, CU_MEM_ACCESS_FLAGS_PROT_READWRITE);
  if (readOnly && api.setAccess(pointer, bytes, &ro, 1) == CUDA_SUCCESS) return true;
  const CUresult r = api.setAccess(pointer, bytes, &rw, 1);
  if (r == CUDA_SUCCESS) return true;
  why = "cuMemSetAccess(CUDA device " + std::to_string(device) + "): " + cuda::driverErrorName(r);
  return false;
}

// ---- VmmMapping -----------------------------------------------------------------------------------

void VmmMapping::map(unsigned long long handle, std::size_t bytes, std::size_t alignment) {
  const DriverApi& api = requireDriver();
  reset();
  handle_ = handle;
  size_ = bytes;
  checkCu(api.reserve(&ptr_, size_, alignment, 0, 0), "cuMemAddressReserve");
  checkCu(api.map(ptr_, size_, 0, handle_, 0), "cuMemMap");
  mapped_ = true;
}

VmmMapping& VmmMapping::operator=(VmmMapping&& o) noexcept {
  if (this != &o) {
    reset();
    handle_ = std::exchange(o.handle_, 0);
    ptr_ = std::exchange(o.ptr_, 0);
    size_ = std::exchange(o.size_, 0);
    mapped_ = std::exchange(o.mapped_, false);
  }
  return *this;
}

void VmmMapping::reset() noexcept {
  const DriverApi& api = driver();
  if (mapped_) logIfFailed(api.unmap(ptr_, size_), "cuMemUnmap");
  if (ptr_) logIfFailed(api.addressFree(ptr_, size_), "cuMemAddressFree");
  if (handle_) logIfFailed(api.release(handle_), "cuMemRelease");
  mapped_ = false;
  ptr_ = 0;
  handle_ = 0;
  size_ = 0;
}

// ---- VmmExport / VmmImport ------------------------------------------------------------------------

VmmExport::VmmExport(int device, std::size_t bytes) {
  const DriverApi& api = requireDriver();
  cuda::DeviceGuard guard(device);
  cuda::check(cudaFree(nullptr), "cudaFree(nullptr) (context)");
  const std::size_t g = granularity(api, device);
  CUmemAllocationProp prop = allocationProp(device);
  CUmemGenericAllocationHandle handle = 0;
  checkCu(api.create(&handle, (bytes + g - 1) / g * g, &prop, 0), "cuMemCreate(POSIX_FILE_DESCRIPTOR)");
  mapping_.map(handle, (bytes + g - 1) / g * g, g);  // owns the handle from here, even if it throws
  const CUmemAccessDesc readWrite = accessFor(device, CU_MEM_ACCESS_FLAGS_PROT_READWRITE);
  checkCu(api.setAccess(mapping_.pointer(), mapping_.size(), &readWrite, 1), "cuMemSetAccess(read-write)");
  int fd = -1;
  checkCu(api.exportHandle(&fd, handle, CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR, 0),
          "cuMemExportToShareableHandle(POSIX_FILE_DESCRIPTOR)");
  fd_ = UniqueFd(fd);
}

VmmImport::VmmImport(int device, int fd, std::size_t bytes) {
  const DriverApi& api = requireDriver();
  cuda::DeviceGuard guard(device);
  cuda::check(cudaFree(nullptr), "cudaFree(nullptr) (context)");
  CUmemGenericAllocationHandle handle = 0;
  // The driver takes the fd as a pointer-sized value and does not consume it.
  checkCu(api.importHandle(&handle, reinterpret_cast<void*>(static_cast<std::intptr_t>(fd)),
                           CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR),
          "cuMemImportFromShareableHandle(POSIX_FILE_DESCRIPTOR)");
  mapping_.map(handle, bytes, granularity(api, device));
  bytes_ = bytes;
  // Readers only read the ring: read-only where the driver grants it, else read-write.
  const CUmemAccessDesc readOnly = accessFor(device, CU_MEM_ACCESS_FLAGS_PROT_READ);
  const CUmemAccessDesc readWrite = accessFor(device, CU_MEM_ACCESS_FLAGS_PROT_READWRITE);
  if (api.setAccess(mapping_.pointer(), bytes, &readOnly, 1) == CUDA_SUCCESS) {
    readOnly_ = true;
  } else {
    checkCu(api.setAccess(mapping_.pointer(), bytes, &readWrite, 1), "cuMemSetAccess(read-write)");
  }
}

}  // namespace zerohop::share_detail
