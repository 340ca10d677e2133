#pragma once
// H.264 through libavcodec's libx264 wrapper, set for live latency: constrained baseline, tune
// zerolatency (no lookahead, no B-frames, sliced threads), CBR with a one-frame VBV, SPS/PPS before
// every IDR, no scene-cut keyframes (IDRs come from the interval or a request), forced IDR on demand.
// Bitrate changes go through libavcodec's per-frame reconfig (x264_encoder_reconfig): no restart.
// Thread-safety: thread-bound.

#include <cstdint>
#include <string>

#include "av_handles.hpp"
#include "zerohop/encoder.hpp"

namespace zerohop::encode {

class X264Encoder final : public VideoEncoder {
 public:
  /// `config` must have passed validateConfig(). Throws Error(kUnavailable) if libavcodec lacks
  /// libx264 and Error(kDevice) if the codec refuses to open.
  explicit X264Encoder(const EncoderConfig& config);

  EncodedUnitPtr encode(const Frame& frame, bool forceKeyframe) override;
  void setBitrate(std::uint32_t kbps) override;
  std::string name() const override;
  EncoderStats stats() const override { return stats_; }

 private:
  void applyBitrate(std::uint32_t kbps) noexcept;

  EncoderConfig config_;
  int levelIdc_ = 31;
  CodecContextPtr ctx_;
  AvFramePtr picture_;  // wraps the caller's planes for one call; never owns pixels
  AvPacketPtr packet_;
  std::int64_t nextPts_ = 0;
  EncoderStats stats_{};
};

}  // namespace zerohop::encode
