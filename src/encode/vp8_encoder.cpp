#include "vp8_encoder.hpp"

#include <string>

#include "av_error.hpp"
#include "encode_step.hpp"
#include "software_codec.hpp"
#include "zerohop/error.hpp"
#include "zerohop/log.hpp"

namespace zerohop::encode {
namespace {

// Rate control as WebRTC's own VP8 sender sets libvpx (buffer 1 s, start at 0.5 s, aim at 0.6 s),
// quantiser 2..56, an intra frame at most 3x a frame's share: a keyframe spreads over a few frames'
// budget instead of waiting on the wire, and CBR keeps the long-run rate at the configured bitrate.
constexpr int kBufferMs = 1000, kInitialBufferMs = 500;
constexpr const char* kMaxIntraPercent = "300";

void setOption(AVCodecContext* ctx, const char* key, const char* value) {
  setPrivateOption(ctx, key, value, "libvpx");
}

}  // namespace

Vp8Encoder::Vp8Encoder(const EncoderConfig& config) : config_(config) {
  if (config.inputFormat != PixelFormat::kI420) {
    throw Error(Errc::kInvalidArgument, "VP8 (libvpx) encodes I420 frames; got " +
                                            std::string(formatName(config.inputFormat)) + " (convert to i420 first)");
  }
  SoftwareCodec sw = openSoftwareCodec("libvpx", "libvpx", config, AV_PIX_FMT_YUV420P);
  const AVCodec* codec = sw.codec;
  ctx_ = std::move(sw.ctx);
  picture_ = std::move(sw.picture);
  packet_ = std::move(sw.packet);
  AVCodecContext* c = ctx_.get();
  c->keyint_min = 0;  // a forced keyframe is never refused for being too close to the last one
  c->qmin = 2;
  c->qmax = 56;
  applyBitrate(config.bitrateKbps);

  setOption(c, "deadline", "realtime");
  setOption(c, "cpu-used", std::to_string(kCpuUsed).c_str());
  setOption(c, "lag-in-frames", "0");  // one frame in, its frame out: no lookahead
  setOption(c, "auto-alt-ref", "0");   // no hidden alt-ref frames (they need lookahead, and cost a packet)
  setOption(c, "error-resilient", "default");  // decodable again after a lost frame once a reference arrives
  setOption(c, "drop-threshold", "0");  // never skip a frame: every frame in gives one out
  setOption(c, "max-intra-rate", kMaxIntraPercent);
  setOption(c, "undershoot-pct", "100");
  setOption(c, "overshoot-pct", "15");
  setOption(c, "static-thresh", "1");

  if (const int err = avcodec_open2(c, codec, nullptr); err < 0) {
    throwAv(Errc::kDevice, "avcodec_open2(libvpx)", err,
            "libvpx refused the settings (" + std::to_string(config.width) + "x" + std::to_string(config.height) +
                "); see the libvpx log line above");
  }
  const std::string keyframes = config.keyframeIntervalFrames
                                    ? "a keyframe every " + std::to_string(config.keyframeIntervalFrames) + " frames"
                                    : "keyframes on request only";
  log::info("encoder: ", name(), ", ", config.width, "x", config.height, "@", config.fps, ", ", keyframes, ", ",
            config.threads, " thread(s)");
}

void Vp8Encoder::applyBitrate(std::uint32_t kbps) noexcept {
  AVCodecContext* c = ctx_.get();
  const std::int64_t bps = static_cast<std::int64_t>(kbps) * 1000;
  c->bit_rate = bps;
  c->rc_min_rate = bps;  // min == max == rate: libavcodec's libvpx wrapper selects VPX_CBR
  c->rc_max_rate = bps;
  c->rc_buffer_size = static_cast<int>(bps * kBufferMs / 1000);  // bits; the wrapper turns them into ms
  c->rc_initial_buffer_occupancy = static_cast<int>(bps * kInitialBufferMs / 1000);
}

void Vp8Encoder::setBitrate(std::uint32_t kbps) {
  // FFmpeg 5.1's libvpx wrapper reads the rate only in avcodec_open2; changing it would need a new
  // encoder (and a keyframe). Nothing in zerohop changes a running encoder's bitrate yet.
  throw Error(Errc::kUnsupported, "VP8: changing the bitrate (to " + std::to_string(kbps) +
                                      " kb/s) needs a new encoder; open one with that bitrate");
}

std::string Vp8Encoder::name() const {
  return "libvpx VP8 (realtime, cpu-used " + std::to_string(kCpuUsed) + ", CBR " +
         std::to_string(config_.bitrateKbps) + " kb/s)";
}

EncodedUnitPtr Vp8Encoder::encode(const Frame& frame, bool forceKeyframe) {
  checkHostFrame(frame, config_, "VP8 (libvpx)");
  AVFrame* pic = picture_.get();
  wrapHostFrame(pic, frame, ctx_.get(), nextPts_++, forceKeyframe);
  return encodeOneFrame(ctx_.get(), pic, packet_.get(), frame, "libvpx", PixelFormat::kVP8, config_.width,
                        config_.height, stats_);
}

}  // namespace zerohop::encode
