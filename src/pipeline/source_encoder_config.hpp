#pragma once
// The encoder settings a data path derives from its source, shared by the CPU path (EncodeProcessor)
// and the GPU path (GpuProcessor): what the user chose (--encoder, --bitrate, --preset, --keyint)
// stays, the picture (size, rate, colour) is the source's. Pure logic: opens nothing.
// Thread-safety: reentrant.

#include "zerohop/encoder.hpp"
#include "zerohop/source.hpp"

namespace zerohop {

/// `config` for frames of `source` converted to `inputFormat`: the source's size and frame rate, and
/// its colour description, which both conversions keep (libyuv on the CPU, the YUV kernels on the
/// GPU), except MJPEG, which decodes as JFIF: BT.601 full range. Other fields are left as given.
EncoderConfig encoderConfigFor(EncoderConfig config, const SourceInfo& source, PixelFormat inputFormat);

}  // namespace zerohop
