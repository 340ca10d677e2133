#include "share/cuda/cuda_ipc_handles.hpp"

#include <cstring>

#include "gpu/cuda_check.hpp"

namespace zerohop::share_detail {

static_assert(sizeof(cudaIpcMemHandle_t) == kCudaIpcHandleBytes);
static_assert(sizeof(cudaIpcEventHandle_t) == kCudaIpcHandleBytes);

// ---- InterprocessEvent ------------------------------------------------------------------------

InterprocessEvent::InterprocessEvent(int device) : device_(device) {
  cuda::DeviceGuard guard(device);
  cuda::check(cudaEventCreateWithFlags(&event_, cudaEventDisableTiming | cudaEventInterprocess),
              "cudaEventCreateWithFlags(cudaEventDisableTiming | cudaEventInterprocess)");
}

InterprocessEvent& InterprocessEvent::operator=(InterprocessEvent&& o) noexcept {
  if (this != &o) {
    reset();
    event_ = std::exchange(o.event_, nullptr);
    device_ = std::exchange(o.device_, -1);
  }
  return *this;
}

IpcHandleBytes InterprocessEvent::exportHandle() const {
  cuda::DeviceGuard guard(device_);
  cudaIpcEventHandle_t h{};
  cuda::check(cudaIpcGetEventHandle(&h, event_), "cudaIpcGetEventHandle");
  IpcHandleBytes out{};
  std::memcpy(out.data(), &h, sizeof h);
  return out;
}

void InterprocessEvent::reset() noexcept {
  if (!event_) return;
  try {
    cuda::DeviceGuard guard(device_);
    cuda::logIfFailed(cudaEventDestroy(event_), "cudaEventDestroy(interprocess event)");
  } catch (...) {
    cuda::logIfFailed(cudaErrorInvalidDevice, "cudaSetDevice (destroying an interprocess event)");
  }
  event_ = nullptr;
}

// ---- ImportedEvent ----------------------------------------------------------------------------

ImportedEvent::ImportedEvent(int device, const IpcHandleBytes& handle) : device_(device) {
  cuda::DeviceGuard guard(device);
  cudaIpcEventHandle_t h{};
  std::memcpy(&h, handle.data(), sizeof h);
  cuda::check(cudaIpcOpenEventHandle(&event_, h), "cudaIpcOpenEventHandle");
}

ImportedEvent& ImportedEvent::operator=(ImportedEvent&& o) noexcept {
  if (this != &o) {
    reset();
    event_ = std::exchange(o.event_, nullptr);
    device_ = std::exchange(o.device_, -1);
  }
  return *this;
}

void ImportedEvent::reset() noexcept {
  if (!event_) return;
  try {
    cuda::DeviceGuard guard(device_);
    cuda::logIfFailed(cudaEventDestroy(event_), "cudaEventDestroy(imported event)");
  } catch (...) {
    cuda::logIfFailed(cudaErrorInvalidDevice, "cudaSetDevice (destroying an imported event)");
  }
  event_ = nullptr;
}

// ---- IpcMemoryMapping -------------------------------------------------------------------------

IpcMemoryMapping::IpcMemoryMapping(int device, const IpcHandleBytes& handle) : device_(device) {
  cuda::DeviceGuard guard(device);
  cudaIpcMemHandle_t h{};
  std::memcpy(&h, handle.data(), sizeof h);
  cuda::check(cudaIpcOpenMemHandle(&ptr_, h, cudaIpcMemLazyEnablePeerAccess),
              "cudaIpcOpenMemHandle(cudaIpcMemLazyEnablePeerAccess)");
}

IpcMemoryMapping& IpcMemoryMapping::operator=(IpcMemoryMapping&& o) noexcept {
  if (this != &o) {
    reset();
    ptr_ = std::exchange(o.ptr_, nullptr);
    device_ = std::exchange(o.device_, -1);
  }
  return *this;
}

void IpcMemoryMapping::reset() noexcept {
  if (!ptr_) return;
  try {
    cuda::DeviceGuard guard(device_);
    cuda::logIfFailed(cudaIpcCloseMemHandle(ptr_), "cudaIpcCloseMemHandle");
  } catch (...) {
    cuda::logIfFailed(cudaErrorInvalidDevice, "cudaSetDevice (closing an IPC mapping)");
  }
  ptr_ = nullptr;
}

}  // namespace zerohop::share_detail
