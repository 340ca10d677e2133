// chooseGpuEncoder: --encoder auto|nvenc|x264 for frames in GPU memory. Part of zerohop_nvenc_probe
// (no FFmpeg), so the decision is tested on every machine, the GPU machine included.
#include "zerohop/error.hpp"
#include "zerohop/nvenc.hpp"

namespace zerohop {

GpuEncoderChoice chooseGpuEncoder(const std::string& requested, const NvencAvailability& nvenc) {
  if (requested == "x264") return {false, "x264 on a host copy of each GPU frame, because of --encoder x264"};
  if (requested != "auto" && requested != "nvenc") {
    throw Error(Errc::kInvalidArgument, "--encoder takes auto, x264 or nvenc; got '" + requested + "'");
  }
  if (nvenc.available) return {true, "NVENC encodes the frames from VRAM: " + describe(nvenc)};
  if (requested == "nvenc") throw Error(Errc::kUnavailable, "NVENC: " + nvenc.reason + "; use --encoder x264");
  return {false, "encoder auto: x264 on a host copy of each GPU frame, because NVENC is unavailable: " + nvenc.reason};
}

GpuEncoderChoice chooseGpuEncoder(const std::string& requested, int device) {
  if (requested == "x264") return chooseGpuEncoder(requested, NvencAvailability{});
  return chooseGpuEncoder(requested, probeNvenc(device));
}

}  // namespace zerohop
