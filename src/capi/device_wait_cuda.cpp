// zerohop::capi::streamWaitEvent with the CUDA runtime (device_wait.hpp).
#include <cuda_runtime_api.h>

#include <string>

#include "capi/device_wait.hpp"
#include "zerohop/error.hpp"

namespace zerohop::capi {
namespace {
void check(cudaError_t st, const char* call) {
  if (st == cudaSuccess) return;
  (void)cudaGetLastError();
  throw Error(Errc::kDevice, std::string(call) + ": " + cudaGetErrorName(st) + " (" + cudaGetErrorString(st) + ")");
}
}  // namespace

void streamWaitEvent(void* stream, void* event, int device) {
  // The legacy default stream means "of the current device": make that the frame's device.
  int previous = -1;
  check(cudaGetDevice(&previous), "cudaGetDevice");
  const bool switchDevice = !stream && device >= 0 && device != previous;
  if (switchDevice) check(cudaSetDevice(device), "cudaSetDevice");
  cudaStream_t s = stream ? static_cast<cudaStream_t>(stream) : cudaStreamLegacy;
  const cudaError_t st = cudaStreamWaitEvent(s, static_cast<cudaEvent_t>(event), 0);
  if (switchDevice) (void)cudaSetDevice(previous);
  check(st, "cudaStreamWaitEvent(your stream, the frame's ready event)");
}
}  // namespace zerohop::capi
