// chooseGpuEncoder: encoder auto|nvenc|x264 for frames in GPU memory. Part of zerohop_nvenc_probe
// (no FFmpeg), so the decision is tested on every machine, the GPU machine included.
#include "zerohop/error.hpp"
#include "zerohop/nvenc.hpp"
#include "zerohop/setting_error.hpp"

namespace zerohop {

GpuEncoderChoice chooseGpuEncoder(const std::string& requested, const NvencAvailability& nvenc) {
  if (requested == "x264") return {false, "x264 on a host copy of each GPU frame, because the encoder asked for is x264"};
  if (requested != "auto" && requested != "nvenc") {
    throw SettingError(Errc::kInvalidArgument, setting::kEncoder,
                       "the encoder is auto, x264 or nvenc; got '" + requested + "'");
  }
  if (nvenc.available) return {true, "NVENC encodes the frames from VRAM: " + describe(nvenc)};
  if (requested == "nvenc")
    throw SettingError(Errc::kUnavailable, setting::kEncoder, "NVENC: " + nvenc.reason + "; use the x264 encoder");
  return {false, "encoder auto: x264 on a host copy of each GPU frame, because NVENC is unavailable: " + nvenc.reason};
}

GpuEncoderChoice chooseGpuEncoder(const std::string& requested, int device) {
  if (requested == "x264") return chooseGpuEncoder(requested, NvencAvailability{});
  return chooseGpuEncoder(requested, probeNvenc(device));
}

}  // namespace zerohop
