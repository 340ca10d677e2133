#include "encode_processor.hpp"
#include "gpu_processor.hpp"
#include "passthrough_processor.hpp"
#include "zerohop/error.hpp"
#include "zerohop/log.hpp"
#include "zerohop/nvenc.hpp"
#include "zerohop/setting_error.hpp"

namespace zerohop {

bool isPassthroughSource(const SourceInfo& source) noexcept { return source.format == PixelFormat::kH264; }

std::unique_ptr<FrameProcessor> makeFrameProcessor(const PipelineConfig& config, FrameSource& source,
                                                   Publisher* framesShare, const GpuPathChoice& gpu) {
  const SourceInfo info = source.info();
  if (isPassthroughSource(info)) {
    log::info("the camera delivers H.264: passthrough to WebRTC (no decode, no encode; the encoder, bitrate, "
              "preset and keyframe interval do not apply)");
    return std::make_unique<PassthroughProcessor>(source, info);
  }
  if (gpu.useGpu) {
    auto processor = std::make_unique<GpuProcessor>(config.encoder, info, gpu.device, framesShare, config.batchJpeg);
    log::info(processor->describe());
    return processor;
  }
  // The CPU path encodes with x264 whatever the name; a name that is none of the choices is still the
  // caller's mistake (chooseGpuEncoder refuses it on the GPU path).
  const std::string& name = config.encoder.encoder;
  if (name != "auto" && name != "x264" && name != "nvenc") {
    throw SettingError(Errc::kInvalidArgument, setting::kEncoder,
                       "the encoder is auto, x264 or nvenc; got '" + name + "'");
  }
  // NVENC takes device frames, which only the GPU path makes.
  if (config.encoder.encoder == "nvenc") {
    throw SettingError(Errc::kUnavailable, setting::kEncoder,
                       "encoder nvenc: NVENC " + describe(probeNvenc(gpu.device)) +
                           "; and it takes frames from the GPU path, while this source takes the " + gpu.reason +
                           "; use the x264 encoder (or auto)");
  }
  if (config.encoder.encoder == "auto") log::info("encoder auto: x264, because the frames stay on the CPU path");
  EncoderConfig encoder = config.encoder;
  encoder.encoder = "x264";
  return std::make_unique<EncodeProcessor>(encoder, info, framesShare);
}

}  // namespace zerohop
