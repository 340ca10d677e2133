#include "vp8_encoder.hpp"

#include <vpx/vp8cx.h>

#include <algorithm>
#include <cmath>
#include <memory>
#include <string>
#include <thread>

#include "encode_step.hpp"
#include "zerohop/clock.hpp"
#include "zerohop/error.hpp"
#include "zerohop/log.hpp"

namespace zerohop::encode {
namespace {

// Rate control as WebRTC's own VP8 sender sets libvpx (buffer 1 s, start at 0.5 s, aim at 0.6 s),
// quantiser 2..56, an intra frame at most 3x a frame's share: a keyframe spreads over a few frames'
// budget instead of waiting on the wire, and CBR keeps the long-run rate at the configured bitrate.
// The buffer is in milliseconds, so it scales with every new bitrate by itself.
constexpr unsigned kBufferMs = 1000, kInitialBufferMs = 500, kOptimalBufferMs = 600;
constexpr unsigned kMinQuantizer = 2, kMaxQuantizer = 56;
constexpr int kMaxIntraPercent = 300;
constexpr unsigned kNoPeriodicKeyframe = 1u << 30;

[[noreturn]] void throwVpx(const char* call, vpx_codec_ctx_t* ctx, vpx_codec_err_t err, const std::string& hint) {
  std::string what = std::string(call) + ": " + vpx_codec_err_to_string(err);
  if (ctx != nullptr) {
    if (const char* detail = vpx_codec_error_detail(ctx)) what += std::string(" (") + detail + ")";
  }
  throw Error(Errc::kDevice, what + "; " + hint);
}

void control(vpx_codec_ctx_t* ctx, int id, int value, const char* name) {
  if (const vpx_codec_err_t err = vpx_codec_control_(ctx, id, value); err != VPX_CODEC_OK) {
    throwVpx(name, ctx, err, "this libvpx does not take that VP8 control");
  }
}

// One tick per frame: 1/fps as a fraction (29.97 -> 1000/29970).
vpx_rational_t frameTimebase(double fps) {
  if (std::floor(fps) == fps) return {1, static_cast<int>(fps)};
  return {1000, static_cast<int>(std::lround(fps * 1000))};
}

}  // namespace

Vp8Encoder::VpxCodec::~VpxCodec() {
  if (open) vpx_codec_destroy(&ctx);
}

Vp8Encoder::Vp8Encoder(const EncoderConfig& config) : config_(config), codec_(std::make_unique<VpxCodec>()) {
  if (config.inputFormat != PixelFormat::kI420) {
    throw Error(Errc::kInvalidArgument, "VP8 (libvpx) encodes I420 frames; got " +
                                            std::string(formatName(config.inputFormat)) + " (convert to i420 first)");
  }
  vpx_codec_iface_t* iface = vpx_codec_vp8_cx();
  if (const vpx_codec_err_t err = vpx_codec_enc_config_default(iface, &cfg_, 0); err != VPX_CODEC_OK) {
    throwVpx("vpx_codec_enc_config_default(VP8)", nullptr, err, "this libvpx cannot encode VP8");
  }
  cfg_.g_w = config.width;
  cfg_.g_h = config.height;
  cfg_.g_timebase = frameTimebase(config.fps);
  // 0 is "one per core" in EncoderConfig; libvpx reads 0 as one thread.
  cfg_.g_threads = config.threads > 0 ? static_cast<unsigned>(config.threads) : std::max(1u, std::thread::hardware_concurrency());
  cfg_.g_pass = VPX_RC_ONE_PASS;
  cfg_.g_lag_in_frames = 0;                              // one frame in, its frame out: no lookahead
  cfg_.g_error_resilient = VPX_ERROR_RESILIENT_DEFAULT;  // decodable again after a loss once a reference arrives
  cfg_.rc_end_usage = VPX_CBR;
  cfg_.rc_target_bitrate = config.bitrateKbps;
  cfg_.rc_min_quantizer = kMinQuantizer;
  cfg_.rc_max_quantizer = kMaxQuantizer;
  cfg_.rc_dropframe_thresh = 0;  // never skip a frame: every frame in gives one out
  cfg_.rc_resize_allowed = 0;
  cfg_.rc_undershoot_pct = 100;
  cfg_.rc_overshoot_pct = 15;
  cfg_.rc_buf_sz = kBufferMs;
  cfg_.rc_buf_initial_sz = kInitialBufferMs;
  cfg_.rc_buf_optimal_sz = kOptimalBufferMs;
  cfg_.kf_mode = VPX_KF_AUTO;
  cfg_.kf_min_dist = 0;  // a forced keyframe is never refused for being too close to the last one
  cfg_.kf_max_dist = config.keyframeIntervalFrames ? config.keyframeIntervalFrames : kNoPeriodicKeyframe;

  vpx_codec_ctx_t* ctx = &codec_->ctx;
  if (const vpx_codec_err_t err = vpx_codec_enc_init(ctx, iface, &cfg_, 0); err != VPX_CODEC_OK) {
    throwVpx("vpx_codec_enc_init(VP8)", ctx, err,
             "libvpx refused the settings (" + std::to_string(config.width) + "x" + std::to_string(config.height) +
                 " at " + std::to_string(config.bitrateKbps) + " kb/s)");
  }
  codec_->open = true;
  control(ctx, VP8E_SET_CPUUSED, kCpuUsed, "VP8E_SET_CPUUSED");
  control(ctx, VP8E_SET_ENABLEAUTOALTREF, 0, "VP8E_SET_ENABLEAUTOALTREF");  // alt-refs need lookahead
  control(ctx, VP8E_SET_MAX_INTRA_BITRATE_PCT, kMaxIntraPercent, "VP8E_SET_MAX_INTRA_BITRATE_PCT");
  control(ctx, VP8E_SET_STATIC_THRESHOLD, 1, "VP8E_SET_STATIC_THRESHOLD");

  const std::string keyframes = config.keyframeIntervalFrames
                                    ? "a keyframe every " + std::to_string(config.keyframeIntervalFrames) + " frames"
                                    : "keyframes on request only";
  log::info("encoder: ", name(), ", ", config.width, "x", config.height, "@", config.fps, ", ", keyframes, ", ",
            cfg_.g_threads, " thread(s)");
}

void Vp8Encoder::setBitrate(std::uint32_t kbps) {
  if (kbps == 0) throw Error(Errc::kInvalidArgument, "VP8: a bitrate of 0 kb/s; give one above 0");
  if (kbps == cfg_.rc_target_bitrate) return;
  vpx_codec_enc_cfg_t next = cfg_;
  next.rc_target_bitrate = kbps;
  if (const vpx_codec_err_t err = vpx_codec_enc_config_set(&codec_->ctx, &next); err != VPX_CODEC_OK) {
    throwVpx("vpx_codec_enc_config_set(VP8)", &codec_->ctx, err,
             "the encoder stays at " + std::to_string(cfg_.rc_target_bitrate) + " kb/s");
  }
  cfg_ = next;
}

std::string Vp8Encoder::name() const {
  return "libvpx VP8 (realtime, cpu-used " + std::to_string(kCpuUsed) + ", CBR " +
         std::to_string(config_.bitrateKbps) + " kb/s)";
}

EncodedUnitPtr Vp8Encoder::encode(const Frame& frame, bool forceKeyframe) {
  checkHostFrame(frame, config_, "VP8 (libvpx)");
  vpx_image_t img{};
  // Wraps the caller's planes (no copy: vpx_codec_encode copies the picture before it returns).
  if (vpx_img_wrap(&img, VPX_IMG_FMT_I420, config_.width, config_.height, 1, frame.data[0]) == nullptr) {
    throw Error(Errc::kInternal, "vpx_img_wrap(I420 " + std::to_string(config_.width) + "x" +
                                     std::to_string(config_.height) + ") refused the frame");
  }
  for (int i = 0; i < 3; ++i) {
    img.planes[i] = frame.data[i];
    img.stride[i] = static_cast<int>(frame.pitch[i]);
  }
  vpx_codec_ctx_t* ctx = &codec_->ctx;
  const vpx_enc_frame_flags_t flags = forceKeyframe ? VPX_EFLAG_FORCE_KF : 0;
  if (const vpx_codec_err_t err = vpx_codec_encode(ctx, &img, nextPts_++, 1, flags, VPX_DL_REALTIME);
      err != VPX_CODEC_OK) {
    throwVpx("vpx_codec_encode(VP8)", ctx, err, "frame " + std::to_string(frame.sequence) + " dropped");
  }
  ++stats_.framesIn;

  std::shared_ptr<EncodedUnit> unit;
  vpx_codec_iter_t iter = nullptr;
  while (const vpx_codec_cx_pkt_t* pkt = vpx_codec_get_cx_data(ctx, &iter)) {
    if (pkt->kind != VPX_CODEC_CX_FRAME_PKT) continue;
    if (unit) {  // lag-in-frames 0 never holds a frame back: two frames for one means wrong settings
      throw Error(Errc::kInternal, "libvpx returned two VP8 frames for one frame: it is buffering frames "
                                   "despite lag-in-frames 0");
    }
    unit = std::make_shared<EncodedUnit>();
    const auto* bytes = static_cast<const std::uint8_t*>(pkt->data.frame.buf);
    unit->bytes.assign(bytes, bytes + pkt->data.frame.sz);
    unit->keyframe = (pkt->data.frame.flags & VPX_FRAME_IS_KEY) != 0;
  }
  if (!unit) {
    ++stats_.emptyOutputs;
    log::warn("encoder: libvpx produced no VP8 frame for frame ", frame.sequence, " (", stats_.emptyOutputs,
              " so far)");
    return nullptr;
  }
  finishUnit(*unit, frame, Codec::kVP8, config_.width, config_.height, stats_);
  return unit;
}

}  // namespace zerohop::encode
