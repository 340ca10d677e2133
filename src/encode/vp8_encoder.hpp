#pragma once
// VP8 through libavcodec's libvpx wrapper, for WebRTC viewers whose offer has no usable H.264 (Debian's
// Firefox ESR): realtime deadline, cpu-used 8, lag-in-frames 0 (one frame out for every frame in),
// error-resilient partitions, no alt-ref frames, CBR at the configured bitrate with a short buffer and
// no frame dropping, a keyframe every keyframeIntervalFrames (as the H.264 encode) or on request.
// Bitrate changes go through libavcodec's per-frame reconfig (vpx_codec_enc_config_set): no restart.
// Takes host I420 frames only (libvpx's VP8 encoder reads yuv420p). Thread-safety: thread-bound.

#include <cstdint>
#include <string>

#include "av_handles.hpp"
#include "zerohop/encoder.hpp"

namespace zerohop::encode {

class Vp8Encoder final : public VideoEncoder {
 public:
  /// libvpx's speed/quality knob for VP8 realtime: 8 is what WebRTC stacks use for one core (docs/benchmarks.md).
  static constexpr int kCpuUsed = 8;

  /// `config` must have passed validateConfig() and have inputFormat kI420. Throws Error(kUnavailable)
  /// when libavcodec lacks libvpx and Error(kDevice) if the codec refuses to open.
  explicit Vp8Encoder(const EncoderConfig& config);

  EncodedUnitPtr encode(const Frame& frame, bool forceKeyframe) override;
  void setBitrate(std::uint32_t kbps) override;
  std::string name() const override;
  EncoderStats stats() const override { return stats_; }

 private:
  void applyBitrate(std::uint32_t kbps) noexcept;

  EncoderConfig config_;
  CodecContextPtr ctx_;
  AvFramePtr picture_;  // wraps the caller's planes for one call; never owns pixels
  AvPacketPtr packet_;
  std::int64_t nextPts_ = 0;
  EncoderStats stats_{};
};

}  // namespace zerohop::encode
