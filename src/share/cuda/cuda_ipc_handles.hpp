#pragma once
// Internal: move-only owners of the legacy CUDA IPC handles a device share uses. Constructors throw
// zerohop::Error naming the failing call (cuda::check); destructors make the handle's device
// current, log a failed teardown and never throw; a moved-from owner holds nothing.
// Thread-safety: each object is thread-bound while used; distinct objects are independent.

#include <cuda_runtime_api.h>

#include <utility>

#include "share/wire.hpp"

namespace zerohop::share_detail {

/// An event other processes can open: cudaEventDisableTiming | cudaEventInterprocess.
class InterprocessEvent {
 public:
  InterprocessEvent() = default;
  explicit InterprocessEvent(int device);
  ~InterprocessEvent() { reset(); }
  InterprocessEvent(InterprocessEvent&& o) noexcept { *this = std::move(o); }
  InterprocessEvent& operator=(InterprocessEvent&& o) noexcept;
  InterprocessEvent(const InterprocessEvent&) = delete;
  InterprocessEvent& operator=(const InterprocessEvent&) = delete;

  cudaEvent_t get() const noexcept { return event_; }
  /// cudaIpcGetEventHandle as opaque bytes.
  IpcHandleBytes exportHandle() const;
  void reset() noexcept;

 private:
  cudaEvent_t event_ = nullptr;
  int device_ = -1;
};

/// An event another process exported, opened here (cudaIpcOpenEventHandle; cudaEventDestroy).
class ImportedEvent {
 public:
  ImportedEvent() = default;
  ImportedEvent(int device, const IpcHandleBytes& handle);
  ~ImportedEvent() { reset(); }
  ImportedEvent(ImportedEvent&& o) noexcept { *this = std::move(o); }
  ImportedEvent& operator=(ImportedEvent&& o) noexcept;
  ImportedEvent(const ImportedEvent&) = delete;
  ImportedEvent& operator=(const ImportedEvent&) = delete;

  cudaEvent_t get() const noexcept { return event_; }
  void reset() noexcept;

 private:
  cudaEvent_t event_ = nullptr;
  int device_ = -1;
};

/// Device memory another process exported, mapped here (cudaIpcOpenMemHandle with
/// cudaIpcMemLazyEnablePeerAccess; cudaIpcCloseMemHandle).
class IpcMemoryMapping {
 public:
  IpcMemoryMapping() = default;
  IpcMemoryMapping(int device, const IpcHandleBytes& handle);
  ~IpcMemoryMapping() { reset(); }
  IpcMemoryMapping(IpcMemoryMapping&& o) noexcept { *this = std::move(o); }
  IpcMemoryMapping& operator=(IpcMemoryMapping&& o) noexcept;
  IpcMemoryMapping(const IpcMemoryMapping&) = delete;
  IpcMemoryMapping& operator=(const IpcMemoryMapping&) = delete;

  void* get() const noexcept { return ptr_; }
  void reset() noexcept;

 private:
  void* ptr_ = nullptr;
  int device_ = -1;
};

}  // namespace zerohop::share_detail
