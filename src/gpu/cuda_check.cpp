#include "gpu/cuda_check.hpp"

#include "zerohop/error.hpp"
#include "zerohop/log.hpp"

namespace zerohop::cuda {

std::string errorText(std::string_view call, cudaError_t status, std::string_view context) {
  std::string msg(call);
  msg += " failed: ";
  msg += cudaGetErrorName(status);
  msg += ": ";
  msg += cudaGetErrorString(status);
  if (!context.empty()) {
    msg += " (";
    msg += context;
    msg += ")";
  }
  return msg;
}

void check(cudaError_t status, std::string_view call, std::string_view context) {
  if (status == cudaSuccess) return;
  Errc code = Errc::kDevice;
  switch (status) {
    case cudaErrorMemoryAllocation:
    case cudaErrorNoDevice:
    case cudaErrorInsufficientDriver:
    case cudaErrorDevicesUnavailable: code = Errc::kUnavailable; break;
    case cudaErrorInvalidDevice: code = Errc::kNotFound; break;
    case cudaErrorInvalidValue:
    case cudaErrorInvalidPitchValue:
    case cudaErrorInvalidDevicePointer:
    case cudaErrorInvalidMemcpyDirection: code = Errc::kInvalidArgument; break;
    default: break;
  }
  // Clear a non-sticky error so it is not reported again by the next cudaGetLastError.
  (void)cudaGetLastError();
  throw Error(code, errorText(call, status, context));
}

void checkLaunch(std::string_view kernel) {
  const cudaError_t status = cudaGetLastError();
  if (status != cudaSuccess) throw Error(Errc::kDevice, errorText(std::string(kernel) + " launch", status));
}

void logIfFailed(cudaError_t status, std::string_view call) noexcept {
  if (status == cudaSuccess) return;
  try {
    log::error(errorText(call, status));
  } catch (...) {
  }
}

DeviceGuard::DeviceGuard(int device) {
  check(cudaGetDevice(&previous_), "cudaGetDevice");
  if (previous_ != device) {
    check(cudaSetDevice(device), "cudaSetDevice", "device " + std::to_string(device));
    changed_ = true;
  }
}

DeviceGuard::~DeviceGuard() {
  if (changed_) logIfFailed(cudaSetDevice(previous_), "cudaSetDevice (restore)");
}

}  // namespace zerohop::cuda
