// The nvJPEG backend names (built with or without nvjpeg.h).
#include "zerohop/gpu_jpeg.hpp"

namespace zerohop {

const char* jpegBackendName(JpegBackend backend) noexcept {
  switch (backend) {
    case JpegBackend::kAuto: return "auto";
    case JpegBackend::kHardware: return "hardware";
    case JpegBackend::kGpuHybrid: return "gpu-hybrid";
    case JpegBackend::kHybrid: return "hybrid";
    case JpegBackend::kDefault: return "default";
  }
  return "unknown";
}

}  // namespace zerohop
