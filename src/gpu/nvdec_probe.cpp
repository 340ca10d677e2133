// probeNvdec(): whether this device's NVDEC decodes H.264 4:2:0 8-bit, asked the way the decoder
// itself would find out (cuvidGetDecoderCaps on the device's primary context). Never throws.
#include <string>

#include "gpu/nvdec_api.hpp"
#include "zerohop/error.hpp"
#include "zerohop/gpu_decode.hpp"

namespace zerohop {
namespace {

NvdecInfo unavailable(NvdecInfo info, std::string reason) {
  info.available = false;
  info.reason = std::move(reason);
  return info;
}

}  // namespace

NvdecInfo probeNvdec(int device) {
  NvdecInfo info;
  info.device = device < 0 ? 0 : device;
  std::string whyNot;
  const nvdec::NvdecApi* api = nvdec::NvdecApi::load(&whyNot);
  if (api == nullptr) return unavailable(info, whyNot);
  if (api->cuvid->cuvidGetDecoderCaps == nullptr) {
    return unavailable(info, std::string(nvdec::kCuvidLibraryName) +
                                 " lacks cuvidGetDecoderCaps (driver too old): update the NVIDIA driver");
  }
  try {
    int count = 0;
    api->check(api->cu->cuInit(0), "cuInit");
    api->check(api->cu->cuDeviceGetCount(&count), "cuDeviceGetCount");
    if (count == 0) return unavailable(info, "no CUDA device");
    if (info.device >= count) {
      return unavailable(info, "no CUDA device (device " + std::to_string(info.device) + " requested, " +
                                   std::to_string(count) + " present)");
    }
    nvdec::PrimaryContext context(*api, info.device);
    char name[256] = {};
    if (api->cu->cuDeviceGetName(name, sizeof(name) - 1, context.device()) == CUDA_SUCCESS) info.deviceName = name;
    nvdec::ContextScope current(*api, context.get());
    CUVIDDECODECAPS caps{};
    caps.eCodecType = cudaVideoCodec_H264;
    caps.eChromaFormat = cudaVideoChromaFormat_420;
    caps.nBitDepthMinus8 = 0;
    api->check(api->cuvid->cuvidGetDecoderCaps(&caps), "cuvidGetDecoderCaps");
    if (!caps.bIsSupported) {
      return unavailable(info, "this GPU has no video decoder for H.264 4:2:0 8-bit (cuvidGetDecoderCaps: not supported)");
    }
    if ((caps.nOutputFormatMask & (1u << cudaVideoSurfaceFormat_NV12)) == 0) {
      return unavailable(info, "this GPU's H.264 decoder has no NV12 output (cuvidGetDecoderCaps)");
    }
    info.decoders = caps.nNumNVDECs;
    info.maxWidth = caps.nMaxWidth;
    info.maxHeight = caps.nMaxHeight;
    info.minWidth = caps.nMinWidth;
    info.minHeight = caps.nMinHeight;
    info.maxMacroblocks = caps.nMaxMBCount;
  } catch (const Error& e) {
    const std::string what = e.what();
    if (what.find("CUDA_ERROR_NO_DEVICE") != std::string::npos ||
        what.find("CUDA_ERROR_INSUFFICIENT_DRIVER") != std::string::npos) {
      return unavailable(info, "no CUDA device (" + what + ")");
    }
    return unavailable(info, what);
  }
  info.available = true;
  return info;
}

std::string describe(const NvdecInfo& info) {
  if (!info.available) return "unavailable: " + info.reason;
  return "H.264 on " + (info.deviceName.empty() ? "device " + std::to_string(info.device) : info.deviceName) + ": " +
         std::to_string(info.decoders) + (info.decoders == 1 ? " decoder" : " decoders") + ", up to " +
         std::to_string(info.maxWidth) + "x" + std::to_string(info.maxHeight);
}

}  // namespace zerohop
