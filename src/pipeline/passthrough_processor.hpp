#pragma once
// The passthrough data path: a camera that delivers H.264 has its access units sent to WebRTC as they
// are, with no decode and no encode. The bytes are copied once out of the V4L2 buffer into the
// immutable EncodedUnit every viewer shares (so the buffer goes straight back to the camera); SPS/PPS
// are cached and put in front of every IDR that lacks them (H264ParameterSets). A viewer's keyframe
// request is forwarded to the camera (FrameSource::requestKeyframe(), V4L2_CID_MPEG_VIDEO_FORCE_KEY_FRAME);
// a camera without that control is logged once and new viewers wait for its next IDR (the pipeline
// measures that wait: KeyframeWaits).
// Stage times: capture and ingest come from the source; convert and encode do not exist here.
// Thread-safety: thread-bound (the encode thread); encoderName() is immutable.

#include "frame_processor.hpp"
#include "h264_parameter_sets.hpp"

namespace zerohop {

class PassthroughProcessor final : public FrameProcessor {
 public:
  /// Borrows `source` (it must outlive this) to forward keyframe requests.
  PassthroughProcessor(FrameSource& source, const SourceInfo& info);
  EncodedUnitPtr process(FrameLease& in) override;
  bool requestKeyframe() override;
  bool setBitrate(std::uint32_t) override { return false; }
  std::string encoderName() const override { return encoderName_; }
  std::string vp8Unavailable() const override {
    return "the camera's H.264 is passed through undecoded, so there are no frames to encode as VP8; "
           "serve a raw or MJPEG camera format for viewers without H.264 (an RTSP camera: add ?format=i420 "
           "to its address, which decodes it on the CPU)";
  }

 private:
  FrameSource& source_;
  std::uint32_t width_;
  std::uint32_t height_;
  std::string encoderName_;
  H264ParameterSets parameterSets_;
  bool warnedNoKeyframeControl_ = false;
  bool warnedMissingParameterSets_ = false;
  std::uint64_t inserted_ = 0;
};

}  // namespace zerohop
