// probeJpeg: can nvJPEG be used on a device, and does it have JPEG engines.
#include <string>

#include "gpu/cuda_check.hpp"
#include "gpu/jpeg_handles.hpp"
#include "zerohop/error.hpp"
#include "zerohop/gpu.hpp"
#include "zerohop/gpu_jpeg.hpp"

namespace zerohop {

JpegSupport probeJpeg(int device) {
  JpegSupport s;
  const GpuInfo gpu = probeGpu(device);
  if (!gpu.available) {
    s.reason = "no CUDA device: " + gpu.reason;
    return s;
  }
  std::string why;
  const jpeg::Library* lib = jpeg::nvjpegLibrary(&why);
  if (!lib) {
    s.reason = why;
    return s;
  }
  s.libraryVersion = lib->version;
  try {
    cuda::DeviceGuard guard(gpu.device);
    jpeg::LibraryHandle hw = jpeg::tryHardwareHandle(*lib, s.hardwareReason);
    s.hardware = static_cast<bool>(hw);
    s.available = true;
  } catch (const Error& e) {
    s.reason = e.what();
  }
  return s;
}

}  // namespace zerohop
