#pragma once
// The GPU data path: each raw source frame (in page-locked memory: the camera's USERPTR buffers or
// the test camera's pool) is uploaded with one DMA and converted to NV12 in VRAM by a kernel
// (GpuFramePath), straight into a slot of the pipeline's device frame share with --share. NVENC, where it can
// open a session, encodes that device frame: nothing returns to the CPU. Otherwise x264 encodes one
// copy of it in page-locked host memory, the only trip back, stated in the encoder name and the log.
// The VP8 encode (viewers without H.264) takes that host copy, or beside NVENC a download of the
// frame made only while a VP8 viewer watches (lastHostFrame()). A ladder's lower rungs are scaled from
// the device frame (lastDeviceFrame()).
// Thread-safety: thread-bound (the encode thread); encoderName() is immutable.

#include <memory>

#include "frame_processor.hpp"
#include "zerohop/encoder.hpp"
#include "gpupath/gpu_path.hpp"

namespace zerohop {

class GpuProcessor final : public FrameProcessor {
 public:
  /// `encoder`'s size and fps are taken from `source`; "auto" uses NVENC when a session opens on
  /// `device`, else x264 on a host copy; "nvenc" where it cannot open is an Error naming the cause.
  /// `framesShare` non-null: frames are converted straight into slots of that device-memory share
  /// (the pipeline's, laid out as GpuFramePath::deviceLayout) and published there. Throws Error.
  GpuProcessor(EncoderConfig encoder, const SourceInfo& source, int device, Publisher* framesShare,
               bool batchJpeg = false);
  EncodedUnitPtr process(FrameLease& in) override;
  bool requestKeyframe() override;
  bool setBitrate(std::uint32_t kbps) override;
  std::string encoderName() const override { return encoderName_; }
  std::string describe() const { return path_->describe(); }
  /// The NV12 frame just encoded, in host memory: x264's copy, or (NVENC) one download of it now.
  const Frame* lastHostFrame() override;
  /// The NV12 frame just encoded, in VRAM (the lower rungs of a ladder are scaled from it).
  const Frame* lastDeviceFrame() override { return processed_ ? lastDevice_ : nullptr; }
  bool encodesFromDevice() const override { return deviceInput_; }
  std::string vp8Unavailable() const override { return {}; }

 private:
  std::unique_ptr<GpuFramePath> path_;
  std::unique_ptr<VideoEncoder> encoder_;
  std::string encoderName_;
  bool deviceInput_ = false;  // NVENC takes the device frame; x264 the host copy
  const Frame* lastHost_ = nullptr;  // x264: the host copy of the last frame processed
  const Frame* lastDevice_ = nullptr;  // the device frame of the last frame processed
  bool processed_ = false;           // the last process() converted its frame (downloadLast() has one)
  bool forceKeyframe_ = false;
  std::uint32_t appliedKbps_ = 0;     // the encoder's bitrate
  std::int64_t lastRateChangeNs_ = 0;  // NVENC: when it was last changed (each change costs an IDR)
};

}  // namespace zerohop
