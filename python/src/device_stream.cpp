#include "device_stream.hpp"

#include "zerohop/error.hpp"

namespace zerohop::python {

// A module built without CUDA never receives device frames (its Hello does not offer device memory,
// so a device publisher refuses it); this is only the guard.
void orderStreamAfterProducer(const GpuSync& /*sync*/, std::intptr_t /*consumerStream*/) {
  throw Error(Errc::kUnsupported,
              "this zerohop module was built without CUDA: it cannot export GPU-memory frames");
}

}  // namespace zerohop::python
