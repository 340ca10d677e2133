#pragma once
// Internal: parsing of `--gpu auto|off|N`, shared by the CUDA build and the stand-in.
#include <string>

namespace zerohop::gpupath {

struct GpuOption {
  enum class Kind { kAuto, kOff, kDevice } kind = Kind::kAuto;
  int device = -1;  ///< for kDevice
};

/// Throws Error(kInvalidArgument) naming the accepted values.
GpuOption parseGpuOption(const std::string& text);

}  // namespace zerohop::gpupath
