// The encoder factory: validates the config once, then resolves the encoder name. NVENC (issue 6)
// adds its branch here; "auto" will try it first and fall back to x264 with a one-line reason.
#include <algorithm>
#include <cctype>

#include "encoder_config.hpp"
#include "x264_encoder.hpp"
#include "zerohop/encoder.hpp"
#include "zerohop/error.hpp"
#include "zerohop/log.hpp"

namespace zerohop {
namespace {

std::unique_ptr<VideoEncoder> makeX264(const EncoderConfig& config) {
  encode::validateConfig(config);
  if (!encode::isX264Preset(config.preset)) {
    throw Error(Errc::kInvalidArgument,
                "x264 preset '" + config.preset +
                    "' is unknown; use ultrafast, superfast (default), veryfast, faster, "
                    "fast, medium, slow, slower, veryslow or placebo");
  }
  return std::make_unique<encode::X264Encoder>(config);
}

}  // namespace

std::unique_ptr<VideoEncoder> makeEncoder(const EncoderConfig& config) {
  std::string name = config.encoder;
  std::transform(name.begin(), name.end(), name.begin(), [](unsigned char ch) { return std::tolower(ch); });
  if (name == "x264" || name == "libx264") return makeX264(config);
  if (name == "auto") {
    auto encoder = makeX264(config);
    log::info("encoder auto: using x264 (NVENC support is not built into this version)");
    return encoder;
  }
  if (name == "nvenc" || name == "h264_nvenc") {
    throw Error(Errc::kUnsupported,
                "encoder 'nvenc' is not available in this build of zerohop (NVENC support is not built in); "
                "use --encoder x264");
  }
  throw Error(Errc::kInvalidArgument, "unknown encoder '" + config.encoder + "'; choose x264, nvenc or auto");
}

}  // namespace zerohop
