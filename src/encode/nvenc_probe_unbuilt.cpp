// probeNvenc() of a build without nv-codec-headers (ZEROHOP_NVENC_HEADERS_DIR not found): NVENC
// cannot be used, and says so.
#include "zerohop/nvenc.hpp"

namespace zerohop {

NvencAvailability probeNvenc(int device) {
  NvencAvailability a;
  a.device = device < 0 ? 0 : device;
  a.status = "not built";
  a.reason = "NVENC support not built (nv-codec-headers missing at build time)";
  return a;
}

}  // namespace zerohop
