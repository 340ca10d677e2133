// The encoder factory: validates the config once, then resolves the encoder name. "nvenc" asks
// probeNvenc() first, so a machine without NVENC fails within seconds with the reason in words;
// "auto" uses NVENC when a session opens and the input is device NV12, else x264, with one log line.
// "vp8" is libvpx (the second encode for viewers without H.264), never chosen by "auto".
#include <algorithm>
#include <cctype>

#include "encoder_config.hpp"
#include "nvenc_encoder.hpp"
#include "vp8_encoder.hpp"
#include "x264_encoder.hpp"
#include "zerohop/encoder.hpp"
#include "zerohop/error.hpp"
#include "zerohop/log.hpp"
#include "zerohop/nvenc.hpp"
#include "zerohop/setting_error.hpp"

namespace zerohop {
namespace {

std::unique_ptr<VideoEncoder> makeX264(const EncoderConfig& config) {
  encode::validateConfig(config);
  if (!encode::isX264Preset(encode::x264PresetFor(config))) {
    throw Error(Errc::kInvalidArgument,
                "x264 preset '" + config.preset +
                    "' is unknown; use auto (default: superfast up to 1080p30's macroblock rate, ultrafast above), "
                    "ultrafast, superfast, veryfast, faster, fast, medium, slow, slower, veryslow or placebo");
  }
  return std::make_unique<encode::X264Encoder>(config);
}

bool deviceNv12(const EncoderConfig& config) {
  return config.inputFormat == PixelFormat::kNV12 && config.inputMemory == MemoryKind::kDevice;
}

std::unique_ptr<VideoEncoder> makeNvenc(const EncoderConfig& config, const NvencAvailability& nvenc) {
  if (!nvenc.available) {
    // kUnsupported: this build cannot do it at all; kUnavailable: this machine cannot, now.
    throw SettingError(nvenc.status == "not built" ? Errc::kUnsupported : Errc::kUnavailable, setting::kEncoder,
                       "NVENC: " + nvenc.reason + "; use the x264 encoder");
  }
  (void)encode::nvencPreset(config.preset);  // a bad preset is the caller's error, before any session
  return encode::makeNvencEncoder(config);
}

}  // namespace

std::unique_ptr<VideoEncoder> makeEncoder(const EncoderConfig& config) {
  std::string name = config.encoder;
  std::transform(name.begin(), name.end(), name.begin(), [](unsigned char ch) { return std::tolower(ch); });
  if (name == "x264" || name == "libx264") return makeX264(config);
  if (name == "vp8" || name == "libvpx") {
    encode::validateConfig(config);
    return std::make_unique<encode::Vp8Encoder>(config);
  }
  if (name == "nvenc" || name == "h264_nvenc") {
    encode::validateConfig(config);
    return makeNvenc(config, probeNvenc(config.gpuDevice));
  }
  if (name == "auto") {
    encode::validateConfig(config);
    const NvencAvailability nvenc = probeNvenc(config.gpuDevice);
    if (nvenc.available && deviceNv12(config)) {
      log::info("encoder auto: NVENC (", describe(nvenc), ")");
      return makeNvenc(config, nvenc);
    }
    auto encoder = makeX264(config);
    if (!nvenc.available) {
      log::info("encoder auto: x264, because NVENC is unavailable: ", nvenc.reason);
    } else {
      log::info("encoder auto: x264, because the frames are ", formatName(config.inputFormat), " in ",
                memoryKindName(config.inputMemory), " memory and NVENC here takes NV12 in GPU memory (NVENC ",
                describe(nvenc), ")");
    }
    return encoder;
  }
  throw SettingError(Errc::kInvalidArgument, setting::kEncoder,
                     "unknown encoder '" + config.encoder + "'; choose x264, nvenc or auto (or vp8)");
}

}  // namespace zerohop
