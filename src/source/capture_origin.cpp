// captureOriginName (zerohop/source.hpp): the words /stats uses for where capture instants come from.
#include "zerohop/source.hpp"

namespace zerohop {

const char* captureOriginName(CaptureOrigin origin) noexcept {
  switch (origin) {
    case CaptureOrigin::kLocal:
      return "local";
    case CaptureOrigin::kCamera:
      return "camera";
    case CaptureOrigin::kArrival:
      return "arrival";
  }
  return "local";
}

}  // namespace zerohop
