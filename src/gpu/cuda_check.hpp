#pragma once
// Internal: how every CUDA runtime call in zerohop is checked, and the scoped device selection.
// Thread-safety: reentrant (the current device is per thread in the CUDA runtime).

#include <cuda_runtime_api.h>

#include <string>
#include <string_view>

namespace zerohop::cuda {

/// "<call> failed: <cudaGetErrorName>: <cudaGetErrorString>" (+ " (<context>)").
std::string errorText(std::string_view call, cudaError_t status, std::string_view context = {});

/// Throws zerohop::Error(Errc::kDevice, or kUnavailable for out-of-memory / no device) when
/// `status` is not cudaSuccess. A function, not a macro: the caller's control flow stays visible.
void check(cudaError_t status, std::string_view call, std::string_view context = {});

/// Checks the launch of a kernel (cudaGetLastError right after the <<<>>>).
void checkLaunch(std::string_view kernel);

/// For destructors: logs a failed teardown call and never throws.
void logIfFailed(cudaError_t status, std::string_view call) noexcept;

/// Makes `device` current for the scope and restores the previous device on exit.
class DeviceGuard {
 public:
  explicit DeviceGuard(int device);
  ~DeviceGuard();
  DeviceGuard(const DeviceGuard&) = delete;
  DeviceGuard& operator=(const DeviceGuard&) = delete;

 private:
  int previous_ = -1;
  bool changed_ = false;
};

}  // namespace zerohop::cuda
