// Device mode of the DLPack export (built when the module links zerohop::share_cuda): the consumer's
// stream waits on the slot's ready event on the GPU (cudaStreamWaitEvent), the host never waits.
#include <cuda_runtime_api.h>

#include <string>

#include "device_stream.hpp"
#include "zerohop/error.hpp"

namespace zerohop::python {
namespace {

void check(cudaError_t st, const char* call) {
  if (st == cudaSuccess) return;
  (void)cudaGetLastError();
  throw Error(Errc::kDevice,
              std::string(call) + ": " + cudaGetErrorName(st) + " (" + cudaGetErrorString(st) + ")");
}

}  // namespace

void orderStreamAfterProducer(const GpuSync& sync, std::intptr_t consumerStream) {
  if (consumerStream == -1) return;  // the consumer synchronises itself (DLPack: stream=-1)
  if (consumerStream == 0) {
    throw Error(Errc::kInvalidArgument,
                "__dlpack__(stream=0) is ambiguous for CUDA (DLPack): pass 1 (legacy default stream), 2 "
                "(per-thread default) or a stream handle");
  }
  if (!sync.readyEvent) return;  // nothing to order after
  cudaStream_t s = consumerStream == 1   ? cudaStreamLegacy
                   : consumerStream == 2 ? cudaStreamPerThread
                                         : reinterpret_cast<cudaStream_t>(consumerStream);
  // The default-stream handles mean "of the current device": make it the frame's device.
  int previous = -1;
  check(cudaGetDevice(&previous), "cudaGetDevice");
  const bool switchDevice = sync.device >= 0 && sync.device != previous;
  if (switchDevice) check(cudaSetDevice(sync.device), "cudaSetDevice");
  const cudaError_t st = cudaStreamWaitEvent(s, static_cast<cudaEvent_t>(sync.readyEvent), 0);
  if (switchDevice) (void)cudaSetDevice(previous);
  check(st, "cudaStreamWaitEvent(consumer stream, slot ready event)");
}

}  // namespace zerohop::python
