#include "device_stream.hpp"

#include "zerohop/error.hpp"

namespace zerohop::python {

void orderStreamAfterProducer(const GpuSync& /*sync*/, std::intptr_t /*consumerStream*/) {
  // Device mode: dlopen("libcudart.so") once; if consumerStream != -1 and sync.readyEvent:
  // cudaStreamWaitEvent((cudaStream_t)consumerStream, (cudaEvent_t)sync.readyEvent, 0).
  throw Error(Errc::kUnsupported,
              "DLPack export of GPU-memory frames is not implemented yet (share ring device mode, issue 5)");
}

}  // namespace zerohop::python
