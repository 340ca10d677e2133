// zerohop::capi::streamWaitEvent in a build without CUDA (device_wait.hpp): such a reader is never
// handed device frames (its Hello offers host memory only), so this is reached only by mistake.
#include "capi/device_wait.hpp"
#include "zerohop/error.hpp"

namespace zerohop::capi {
void streamWaitEvent(void*, void*, int) {
  throw Error(Errc::kUnsupported, "this zerohop was built without CUDA: it cannot order GPU work on device frames");
}
}  // namespace zerohop::capi
