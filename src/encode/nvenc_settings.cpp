#include "nvenc_settings.hpp"

#include <limits>

extern "C" {
#include <libavcodec/avcodec.h>
#include <libavutil/opt.h>
}

#include "av_error.hpp"
#include "encoder_config.hpp"
#include "nvenc_encoder.hpp"
#include "zerohop/error.hpp"

namespace zerohop::encode {

NvencSettings nvencSettings(const EncoderConfig& config, int levelIdc) {
  validateIntraRefresh(config);
  NvencSettings s;
  s.preset = nvencPreset(config.preset);
  // gop_size 0 would mean all-intra to h264_nvenc: "keyframes on request only" is an endless GOP. With
  // intra refresh, h264_nvenc takes gop_size as the refresh period and sends no periodic IDR.
  s.gopSize = config.keyframeIntervalFrames == 0 ? std::numeric_limits<int>::max()
                                                 : static_cast<int>(config.keyframeIntervalFrames);
  s.maxBFrames = 0;
  s.bitRate = s.rcMaxRate = static_cast<std::int64_t>(config.bitrateKbps) * 1000;
  s.rcBufferSize = oneFrameVbvBits(config.bitrateKbps, config.fps);
  s.options = {
      {"preset", s.preset},
      {"tune", "ull"},         // ultra-low-latency tuning
      {"profile", "baseline"},  // no CABAC, no B-frames: what the SDP's profile-level-id offers
      {"level", std::to_string(levelIdc / 10) + "." + std::to_string(levelIdc % 10)},
      {"rc", "cbr"},
      {"zerolatency", "1"},    // zero reorder delay
      {"delay", "0"},          // the packet comes out of the same encode() call
      {"rc-lookahead", "0"},   // no lookahead (a frame of delay each)
      {"b_ref_mode", "disabled"},
      {"forced-idr", "1"},     // a requested keyframe (AV_PICTURE_TYPE_I) is an IDR
      {"intra-refresh", config.intraRefresh ? "1" : "0"},  // 1: refresh over gop_size frames, no periodic IDR
  };
  return s;
}

void applyNvencBitrate(AVCodecContext* c, std::uint32_t kbps, double fps) noexcept {
  c->bit_rate = c->rc_max_rate = static_cast<std::int64_t>(kbps) * 1000;
  c->rc_buffer_size = oneFrameVbvBits(kbps, fps);  // no frame waits on the wire behind a bigger one
}

void applyNvencSettings(AVCodecContext* c, const NvencSettings& s) {
  c->gop_size = s.gopSize;
  c->max_b_frames = s.maxBFrames;
  c->bit_rate = s.bitRate;
  c->rc_max_rate = s.rcMaxRate;
  c->rc_buffer_size = s.rcBufferSize;
  for (const auto& [key, value] : s.options) {
    if (const int err = av_opt_set(c->priv_data, key.c_str(), value.c_str(), 0); err < 0) {
      throwAv(Errc::kDevice, "av_opt_set(h264_nvenc, " + key + "=" + value + ")", err,
              "this libavcodec's h264_nvenc does not take that option (FFmpeg 5.1 or newer needed)");
    }
  }
}

}  // namespace zerohop::encode
