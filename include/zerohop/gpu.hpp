#pragma once
// The CUDA device as the rest of zerohop sees it: probing, page-locked and device allocators for
// frame pools, and registration of driver-owned host buffers. No CUDA types here (users build without the CUDA SDK): the
// CUDA runtime is linked statically into zerohop_gpu, so programs start on machines without it.
// Thread-safety: probeGpu is reentrant; allocators are thread-safe; HostRegistration is a
// move-only owner, thread-bound while used.

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

#include "zerohop/export.h"
#include "zerohop/buffer_pool.hpp"

namespace zerohop {

/// What probeGpu found. `available` = false is a normal answer (no GPU, no driver, driver too old,
/// device too old) with `reason` saying which, in one line; every other field is then best effort.
struct GpuInfo {
  bool available = false;
  std::string reason;           ///< why not available; empty when available
  int device = -1;              ///< the chosen CUDA device ordinal
  int deviceCount = 0;          ///< devices the CUDA runtime sees
  std::string name;             ///< "NVIDIA H200"
  int ccMajor = 0;              ///< compute capability
  int ccMinor = 0;
  std::string driverVersion;    ///< kernel module version from /proc/driver/nvidia/version ("580.159.03"), or ""
  int cudaDriverVersion = 0;    ///< CUDA version the driver supports (cudaDriverGetVersion, 13000 = 13.0); 0 = no driver
  int cudaRuntimeVersion = 0;   ///< CUDA runtime this build links (cudaRuntimeGetVersion)
  std::size_t totalMemoryBytes = 0;
  int multiprocessors = 0;
  std::string pciBusId;         ///< "0000:01:00.0"
  int pciGen = -1;              ///< current PCIe link generation from sysfs; -1 = unknown (VMs, no sysfs)
  int pciWidth = -1;            ///< current PCIe link width (lanes); -1 = unknown
  bool canMapHostMemory = false;   ///< zero-copy (mapped pinned memory) ingest possible
  bool unifiedAddressing = false;  ///< host and device pointers share one address space
  bool integrated = false;         ///< an integrated GPU (Jetson): host memory is device memory
  int asyncEngineCount = 0;        ///< copy engines (copies overlap kernels when >= 1)
};

/// Probes device `requested` (-1 = device 0, or the one CUDA_VISIBLE_DEVICES makes first).
/// Never throws for a missing GPU or driver: returns available = false with the reason.
ZEROHOP_API GpuInfo probeGpu(int requested = -1);

/// One line for logs and `zerohop probe`: "NVIDIA H200 (cc 9.0, 139.7 GiB, driver 580.159.03 / CUDA 13.0, PCIe Gen5 x16)"
/// or "no CUDA device: <reason>".
ZEROHOP_API std::string describe(const GpuInfo& info);

/// Page-locked host memory (cudaHostAlloc, portable + mapped) for pools the camera fills (V4L2
/// USERPTR) and the GPU reads by DMA or zero-copy. Frames from it are MemoryKind::kPinned.
/// Throws Error when `device` cannot be used.
ZEROHOP_API std::unique_ptr<FrameAllocator> makePinnedAllocator(int device);

/// Device memory on `device` (cudaMalloc, 4096-byte aligned as FrameAllocator requires) for device
/// frame pools. Frames from it are MemoryKind::kDevice. Throws Error when `device` cannot be used.
ZEROHOP_API std::unique_ptr<FrameAllocator> makeDeviceAllocator(int device);

/// Page-locks (and maps for zero-copy) host memory that something else owns, e.g. V4L2 MMAP
/// buffers, once at start-up: cudaHostRegister costs about a millisecond per 4 MB, so never per frame.
/// Unregisters on destruction; the memory must outlive the registration. Move-only.
class ZEROHOP_API HostRegistration {
 public:
  HostRegistration() = default;  ///< registers nothing
  /// Registers [ptr, ptr + bytes). Throws Error naming cudaHostRegister and its error text.
  HostRegistration(void* ptr, std::size_t bytes, int device);
  ~HostRegistration();
  HostRegistration(HostRegistration&& other) noexcept;
  HostRegistration& operator=(HostRegistration&& other) noexcept;
  HostRegistration(const HostRegistration&) = delete;
  HostRegistration& operator=(const HostRegistration&) = delete;

  void* data() const noexcept { return ptr_; }
  std::size_t size() const noexcept { return bytes_; }
  bool mapped() const noexcept { return mapped_; }
  /// Unregisters now (idempotent); logs a failure, never throws.
  void reset() noexcept;

 private:
  void* ptr_ = nullptr;
  std::size_t bytes_ = 0;
  bool mapped_ = false;
};

}  // namespace zerohop
