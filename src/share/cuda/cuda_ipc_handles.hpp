#pragma once
// Internal: move-only owners of the legacy CUDA IPC handles a device share uses. Constructors throw
// zerohop::Error naming the failing call (cuda::check); destructors make the handle's device
// current, log a failed teardown and never throw; a moved-from owner holds nothing.
// Thread-safety: each object is thread-bound while used; distinct objects are independent.

#include <cuda_runtime_api.h>

#include <memory>
#include <type_traits>

#include "share/wire.hpp"

namespace zerohop::share_detail {

/// The deleter of the owners below: gives a handle of CUDA device `device` back with `release`,
/// that device current. A failure of the device switch or of `release` is logged, never thrown.
template <typename T>
struct DeviceRelease {
  int device = -1;
  cudaError_t (*release)(T*) = nullptr;
  const char* releaseCall = "";    // names `release` in the log
  const char* setDeviceCall = "";  // names the device switch in the log
  void operator()(T* handle) const noexcept;
};

/// A handle of one CUDA device (a pointer to T), given back by its DeviceRelease.
template <typename T>
using DeviceHandle = std::unique_ptr<T, DeviceRelease<T>>;
using EventHandle = DeviceHandle<std::remove_pointer_t<cudaEvent_t>>;

/// An event other processes can open: cudaEventDisableTiming | cudaEventInterprocess.
class InterprocessEvent {
 public:
  InterprocessEvent() = default;
  explicit InterprocessEvent(int device);

  cudaEvent_t get() const noexcept { return event_.get(); }
  /// cudaIpcGetEventHandle as opaque bytes.
  IpcHandleBytes exportHandle() const;
  void reset() noexcept { event_.reset(); }

 private:
  EventHandle event_;
};

/// An event another process exported, opened here (cudaIpcOpenEventHandle; cudaEventDestroy).
class ImportedEvent {
 public:
  ImportedEvent() = default;
  ImportedEvent(int device, const IpcHandleBytes& handle);

  cudaEvent_t get() const noexcept { return event_.get(); }
  void reset() noexcept { event_.reset(); }

 private:
  EventHandle event_;
};

/// Device memory another process exported, mapped here (cudaIpcOpenMemHandle with
/// cudaIpcMemLazyEnablePeerAccess; cudaIpcCloseMemHandle).
class IpcMemoryMapping {
 public:
  IpcMemoryMapping() = default;
  IpcMemoryMapping(int device, const IpcHandleBytes& handle);

  void* get() const noexcept { return ptr_.get(); }
  void reset() noexcept { ptr_.reset(); }

 private:
  DeviceHandle<void> ptr_;
};

}  // namespace zerohop::share_detail
