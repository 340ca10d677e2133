#include "share/cuda/cuda_ipc_handles.hpp"

#include <cstring>

#include "gpu/cuda_check.hpp"

namespace zerohop::share_detail {

static_assert(sizeof(cudaIpcMemHandle_t) == kCudaIpcHandleBytes);
static_assert(sizeof(cudaIpcEventHandle_t) == kCudaIpcHandleBytes);

template <typename T>
void DeviceRelease<T>::operator()(T* handle) const noexcept {
  try {
    cuda::DeviceGuard guard(device);
    cuda::logIfFailed(release(handle), releaseCall);
  } catch (...) {
    cuda::logIfFailed(cudaErrorInvalidDevice, setDeviceCall);
  }
}

template struct DeviceRelease<std::remove_pointer_t<cudaEvent_t>>;
template struct DeviceRelease<void>;

// ---- InterprocessEvent ------------------------------------------------------------------------

InterprocessEvent::InterprocessEvent(int device) {
  cuda::DeviceGuard guard(device);
  cudaEvent_t event = nullptr;
  cuda::check(cudaEventCreateWithFlags(&event, cudaEventDisableTiming | cudaEventInterprocess),
              "cudaEventCreateWithFlags(cudaEventDisableTiming | cudaEventInterprocess)");
  event_ = EventHandle(event, {device, cudaEventDestroy, "cudaEventDestroy(interprocess event)",
                               "cudaSetDevice (destroying an interprocess event)"});
}

IpcHandleBytes InterprocessEvent::exportHandle() const {
  cuda::DeviceGuard guard(event_.get_deleter().device);
  cudaIpcEventHandle_t h{};
  cuda::check(cudaIpcGetEventHandle(&h, event_.get()), "cudaIpcGetEventHandle");
  IpcHandleBytes out{};
  std::memcpy(out.data(), &h, sizeof h);
  return out;
}

// ---- ImportedEvent ----------------------------------------------------------------------------

ImportedEvent::ImportedEvent(int device, const IpcHandleBytes& handle) {
  cuda::DeviceGuard guard(device);
  cudaIpcEventHandle_t h{};
  std::memcpy(&h, handle.data(), sizeof h);
  cudaEvent_t event = nullptr;
  cuda::check(cudaIpcOpenEventHandle(&event, h), "cudaIpcOpenEventHandle");
  event_ = EventHandle(event, {device, cudaEventDestroy, "cudaEventDestroy(imported event)",
                               "cudaSetDevice (destroying an imported event)"});
}

// ---- IpcMemoryMapping -------------------------------------------------------------------------

IpcMemoryMapping::IpcMemoryMapping(int device, const IpcHandleBytes& handle) {
  cuda::DeviceGuard guard(device);
  cudaIpcMemHandle_t h{};
  std::memcpy(&h, handle.data(), sizeof h);
  void* ptr = nullptr;
  cuda::check(cudaIpcOpenMemHandle(&ptr, h, cudaIpcMemLazyEnablePeerAccess),
              "cudaIpcOpenMemHandle(cudaIpcMemLazyEnablePeerAccess)");
  ptr_ = DeviceHandle<void>(ptr, {device, cudaIpcCloseMemHandle, "cudaIpcCloseMemHandle",
                                  "cudaSetDevice (closing an IPC mapping)"});
}

}  // namespace zerohop::share_detail
