#include "gpu_processor.hpp"

#include "zerohop/log.hpp"
#include "zerohop/nvenc.hpp"

namespace zerohop {

GpuProcessor::GpuProcessor(EncoderConfig enc, const SourceInfo& source, int device, const std::string& shareName) {
  // The same decision (probeNvenc) as `zerohop probe`; tested in tests/nvenc on every machine.
  const GpuEncoderChoice choice = chooseGpuEncoder(enc.encoder, device);
  log::info(choice.reason);
  deviceInput_ = choice.nvenc;
  GpuPathConfig path;
  path.device = device;
  path.sourceFormat = source.format;
  path.width = source.width;
  path.height = source.height;
  path.shareName = shareName;
  path.hostCopy = !deviceInput_;
  path_ = std::make_unique<GpuFramePath>(path);

  enc.encoder = deviceInput_ ? "nvenc" : "x264";
  enc.width = source.width;
  enc.height = source.height;
  enc.fps = source.fps;
  enc.inputFormat = PixelFormat::kNV12;
  enc.inputMemory = deviceInput_ ? MemoryKind::kDevice : MemoryKind::kPinned;
  enc.gpuDevice = device;
  // The YUV kernels keep the source's matrix and range; JPEG (JFIF) is BT.601 full range.
  enc.color = source.format == PixelFormat::kMJPEG ? ColorDesc{ColorMatrix::kBt601, ColorRange::kFull} : source.color;
  encoder_ = makeEncoder(enc);
  encoderName_ = encoder_->name() + (deviceInput_ ? " from VRAM" : " from a host copy of the GPU frame");
}

bool GpuProcessor::requestKeyframe() {
  forceKeyframe_ = true;
  return true;
}

EncodedUnitPtr GpuProcessor::process(FrameLease& in) {
  const bool idr = forceKeyframe_;
  forceKeyframe_ = false;
  const GpuPathOutput out = path_->process(in.frame());
  if (!deviceInput_) in.reset();  // the host copy waited for the upload: the camera buffer can go back now
  // NVENC reads the device frame on its stream after the frame's ready event and returns once the
  // access unit exists; the host copy is complete when process() returns. Either way the source
  // buffer's upload is finished by the time it goes back to the camera below.
  EncodedUnitPtr unit = encoder_->encode(deviceInput_ ? *out.device : *out.host, idr);
  in.reset();
  return unit;
}

}  // namespace zerohop
