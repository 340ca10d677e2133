#pragma once
// VP8 through libvpx's own encoder API, for WebRTC viewers whose offer has no usable H.264 (Debian's
// Firefox ESR): realtime deadline, cpu-used 8, lag-in-frames 0 (one frame out for every frame in),
// error-resilient partitions, no alt-ref frames, CBR at the configured bitrate with a short buffer and
// no frame dropping, a keyframe every keyframeIntervalFrames (as the H.264 encode) or on request.
//
// Why libvpx directly and not libavcodec's libvpx wrapper: congestion control changes the bitrate while
// the encoder runs, and FFmpeg 5.1 (Debian 12) gives no way to do that. Its wrapper reads bit_rate only
// in avcodec_open2 (a changed AVCodecContext::bit_rate is ignored: measured, the rate stays where it was
// opened), none of its private options is AV_OPT_FLAG_RUNTIME_PARAM, and the per-frame metadata it reads
// (vp8-flags, temporal_id, ref-frame-config) carries no rate. Reopening it per change would cost a
// keyframe each time. libvpx itself takes a new rc_target_bitrate on a running encoder
// (vpx_codec_enc_config_set): the next frame is coded for it, no keyframe, the buffer (in ms) keeps its
// level. Settings are the ones the wrapper was given before, field by field.
// Takes host I420 frames only (libvpx's VP8 encoder reads I420). Thread-safety: thread-bound.

#include <vpx/vpx_encoder.h>

#include <cstdint>
#include <memory>
#include <string>

#include "zerohop/encoder.hpp"

namespace zerohop::encode {

class Vp8Encoder final : public VideoEncoder {
 public:
  /// libvpx's speed/quality knob for VP8 realtime: 8 is what WebRTC stacks use for one core (docs/benchmarks.md).
  static constexpr int kCpuUsed = 8;

  /// `config` must have passed validateConfig() and have inputFormat kI420. Throws Error(kInvalidArgument)
  /// for another input format and Error(kDevice) if libvpx refuses the settings.
  explicit Vp8Encoder(const EncoderConfig& config);

  EncodedUnitPtr encode(const Frame& frame, bool forceKeyframe) override;
  /// The next frame is coded for `kbps` (no keyframe, no new encoder). Throws Error(kDevice) if libvpx
  /// refuses it (the encoder keeps its previous rate).
  void setBitrate(std::uint32_t kbps) override;
  std::string name() const override;
  EncoderStats stats() const override { return stats_; }
  std::uint32_t bitrateKbps() const { return cfg_.rc_target_bitrate; }

 private:
  // vpx_codec_ctx_t owner: destroyed once, only if vpx_codec_enc_init succeeded.
  struct VpxCodec {
    vpx_codec_ctx_t ctx{};
    bool open = false;
    VpxCodec() = default;
    VpxCodec(const VpxCodec&) = delete;
    VpxCodec& operator=(const VpxCodec&) = delete;
    ~VpxCodec();
  };

  EncoderConfig config_;
  vpx_codec_enc_cfg_t cfg_{};
  std::unique_ptr<VpxCodec> codec_;  // heap: libvpx keeps no pointer to it, but it never moves either way
  std::int64_t nextPts_ = 0;      // in g_timebase units: one per frame
  EncoderStats stats_{};
};

}  // namespace zerohop::encode
