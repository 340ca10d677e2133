#include "source_encoder_config.hpp"

namespace zerohop {

EncoderConfig encoderConfigFor(EncoderConfig config, const SourceInfo& source, PixelFormat inputFormat) {
  config.width = source.width;
  config.height = source.height;
  config.fps = source.fps;
  config.inputFormat = inputFormat;
  config.color =
      source.format == PixelFormat::kMJPEG ? ColorDesc{ColorMatrix::kBt601, ColorRange::kFull} : source.color;
  return config;
}

}  // namespace zerohop
