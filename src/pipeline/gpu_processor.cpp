#include "gpu_processor.hpp"

#include <utility>

#include "nvenc_rate_steps.hpp"
#include "source_encoder_config.hpp"
#include "zerohop/clock.hpp"
#include "zerohop/log.hpp"
#include "zerohop/nvenc.hpp"

namespace zerohop {

GpuProcessor::GpuProcessor(EncoderConfig enc, const SourceInfo& source, int device, Publisher* framesShare,
                           bool batchJpeg) {
  // The same decision (probeNvenc) as `zerohop probe`; tested in tests/nvenc on every machine.
  const GpuEncoderChoice choice = chooseGpuEncoder(enc.encoder, device);
  log::info(choice.reason);
  deviceInput_ = choice.nvenc;
  GpuPathConfig path;
  path.device = device;
  path.sourceFormat = source.format;
  path.width = source.width;
  path.height = source.height;
  path.share = framesShare;
  path.hostCopy = !deviceInput_;
  path.batchJpeg = batchJpeg;
  path_ = std::make_unique<GpuFramePath>(path);

  enc.encoder = deviceInput_ ? "nvenc" : "x264";
  enc.inputMemory = deviceInput_ ? MemoryKind::kDevice : MemoryKind::kPinned;
  enc.gpuDevice = device;
  appliedKbps_ = enc.bitrateKbps;
  encoder_ = makeEncoder(encoderConfigFor(std::move(enc), source, PixelFormat::kNV12));
  encoderName_ = encoder_->name() + (deviceInput_ ? " from VRAM" : " from a host copy of the GPU frame");
}

bool GpuProcessor::requestKeyframe() {
  forceKeyframe_ = true;
  return true;
}

bool GpuProcessor::setBitrate(std::uint32_t kbps) {
  const std::int64_t now = monotonicNs();
  // NVENC: each change costs an IDR, so the target is followed in steps (nvenc_rate_steps.hpp).
  if (deviceInput_ && !NvencRateSteps::apply(appliedKbps_, kbps, now, lastRateChangeNs_)) return true;
  encoder_->setBitrate(kbps);
  appliedKbps_ = kbps;
  lastRateChangeNs_ = now;
  return true;
}

EncodedUnitPtr GpuProcessor::process(FrameLease& in) {
  const bool idr = std::exchange(forceKeyframe_, false);
  processed_ = false;
  lastHost_ = nullptr;
  lastDevice_ = nullptr;
  const GpuPathOutput out = path_->process(in.frame());
  processed_ = true;
  lastHost_ = out.host;
  lastDevice_ = out.device;
  if (!deviceInput_) in.reset();  // the host copy waited for the upload: the camera buffer can go back now
  // NVENC reads the device frame on its stream after the frame's ready event and returns once the
  // access unit exists; the host copy is complete when process() returns. Either way the source
  // buffer's upload is finished by the time it goes back to the camera below.
  EncodedUnitPtr unit = encoder_->encode(deviceInput_ ? *out.device : *out.host, idr);
  in.reset();
  return unit;
}

const Frame* GpuProcessor::lastHostFrame() {
  if (!processed_) return nullptr;
  if (lastHost_) return lastHost_;
  // NVENC: the device frame stays as written until the next process() (GpuFramePath), so it is
  // downloaded now, after the H.264 unit went out, and only for a frame the VP8 encode takes.
  lastHost_ = &path_->downloadLast();
  return lastHost_;
}

}  // namespace zerohop
