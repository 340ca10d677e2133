#include "x264_encoder.hpp"

#include <algorithm>
#include <cmath>
#include <string>

extern "C" {
#include <libavutil/opt.h>
#include <libavutil/rational.h>
}

#include "annexb.hpp"
#include "av_error.hpp"
#include "encode_step.hpp"
#include "encoder_config.hpp"
#include "software_codec.hpp"
#include "zerohop/clock.hpp"
#include "zerohop/error.hpp"
#include "zerohop/log.hpp"

namespace zerohop::encode {
namespace {

void setOption(AVCodecContext* ctx, const char* key, const char* value) {
  setPrivateOption(ctx, key, value, "libx264");
}

}  // namespace

X264Encoder::X264Encoder(const EncoderConfig& config)
    : config_(config), levelIdc_(h264LevelIdc(config.width, config.height, config.fps, config.bitrateKbps)) {
  config_.preset = x264PresetFor(config);  // "auto": chosen by the macroblock rate
  SoftwareCodec sw = openSoftwareCodec("libx264", "libx264", config,
                                       config.inputFormat == PixelFormat::kNV12 ? AV_PIX_FMT_NV12 : AV_PIX_FMT_YUV420P);
  const AVCodec* codec = sw.codec;
  ctx_ = std::move(sw.ctx);
  picture_ = std::move(sw.picture);
  packet_ = std::move(sw.packet);
  AVCodecContext* c = ctx_.get();
  c->level = levelIdc_;
  c->flags &= ~AV_CODEC_FLAG_GLOBAL_HEADER;  // parameter sets in band
  applyBitrate(config.bitrateKbps);

  setOption(c, "preset", config_.preset.c_str());
  setOption(c, "tune", "zerolatency");
  setOption(c, "profile", "baseline");
  setOption(c, "forced-idr", "1");
  // repeat-headers: SPS/PPS before every IDR. scenecut=0: IDRs only from the interval or a request.
  // No nal-hrd: x264 refuses to change VBV parameters while NAL HRD is signalled, and setBitrate needs that.
  setOption(c, "x264-params", "repeat-headers=1:scenecut=0");

  if (const int err = avcodec_open2(c, codec, nullptr); err < 0) {
    throwAv(Errc::kDevice, "avcodec_open2(libx264)", err,
            "x264 refused the settings (" + std::to_string(config.width) + "x" +
                std::to_string(config.height) + ", preset " + config_.preset +
                "); see the libx264 log line above");
  }
  const std::string keyframes =
      config.keyframeIntervalFrames
          ? "an IDR every " + std::to_string(config.keyframeIntervalFrames) + " frames"
          : "IDRs on request only";
  log::info("encoder: ", name(), ", ", config.width, "x", config.height, "@", config.fps, ", level ",
            levelIdc_ / 10, ".", levelIdc_ % 10, ", ", keyframes, ", ",
            config.threads > 0 ? std::to_string(config.threads) + " thread(s)" : std::string("x264's thread count (by cores)"));
}

void X264Encoder::applyBitrate(std::uint32_t kbps) noexcept {
  AVCodecContext* c = ctx_.get();
  const std::int64_t bps = static_cast<std::int64_t>(kbps) * 1000;
  c->bit_rate = bps;
  c->rc_max_rate = bps;  // CBR: x264 ABR with max rate = rate
  // One frame of VBV at the configured rate: no frame may exceed its share of the bitrate, so none
  // waits on the wire (at 60 fps each frame gets half the bits of a 30 fps frame).
  c->rc_buffer_size = oneFrameVbvBits(kbps, config_.fps);
}

void X264Encoder::setBitrate(std::uint32_t kbps) {
  validateBitrate(kbps);
  if (h264LevelIdc(config_.width, config_.height, config_.fps, kbps) > levelIdc_) {
    throw Error(Errc::kInvalidArgument,
                "bitrate " + std::to_string(kbps) + " kb/s exceeds the stream's H.264 level " +
                    std::to_string(levelIdc_ / 10) + "." + std::to_string(levelIdc_ % 10) +
                    "; restart the stream with that bitrate instead");
  }
  // libavcodec's libx264 wrapper compares these with its x264 parameters before every frame and
  // calls x264_encoder_reconfig when they differ (FFmpeg 5.1 libx264.c reconfig_encoder).
  config_.bitrateKbps = kbps;
  applyBitrate(kbps);
}

std::string X264Encoder::name() const {
  return "libx264 (" + config_.preset + ", zerolatency, CBR " + std::to_string(config_.bitrateKbps) +
         " kb/s)";
}

EncodedUnitPtr X264Encoder::encode(const Frame& frame, bool forceKeyframe) {
  checkHostFrame(frame, config_, "x264");
  AVFrame* pic = picture_.get();
  wrapHostFrame(pic, frame, ctx_.get(), nextPts_++, forceKeyframe);
  return encodeOneFrame(ctx_.get(), pic, packet_.get(), frame, "libx264", Codec::kH264, config_.width,
                        config_.height, stats_);
}

}  // namespace zerohop::encode
