#include "software_codec.hpp"

#include <string>

extern "C" {
#include <libavutil/opt.h>
#include <libavutil/rational.h>
}

#include "av_error.hpp"
#include "zerohop/error.hpp"

namespace zerohop::encode {
namespace {

constexpr int kInfiniteGop = 1 << 30;  // X264_KEYINT_MAX_INFINITE; libvpx: no periodic keyframes either

}  // namespace

SoftwareCodec openSoftwareCodec(const char* name, const char* library, const EncoderConfig& config, AVPixelFormat pixFmt) {
  SoftwareCodec s;
  s.codec = avcodec_find_encoder_by_name(name);
  if (s.codec == nullptr) {
    throw Error(Errc::kUnavailable, std::string("avcodec_find_encoder_by_name(\"") + name +
                                        "\") found nothing: this FFmpeg was built without " + library +
                                        "; install an FFmpeg with " + library +
                                        " (Debian 12: libavcodec59 from the main archive)");
  }
  s.ctx.reset(avcodec_alloc_context3(s.codec));
  s.picture.reset(av_frame_alloc());
  s.packet.reset(av_packet_alloc());
  if (!s.ctx || !s.picture || !s.packet)
    throw Error(Errc::kDevice, "avcodec_alloc_context3/av_frame_alloc: out of memory");

  AVCodecContext* c = s.ctx.get();
  c->width = static_cast<int>(config.width);
  c->height = static_cast<int>(config.height);
  c->pix_fmt = pixFmt;
  c->framerate = av_d2q(config.fps, 1001000);
  c->time_base = av_inv_q(c->framerate);
  c->gop_size =
      config.keyframeIntervalFrames == 0 ? kInfiniteGop : static_cast<int>(config.keyframeIntervalFrames);
  c->max_b_frames = 0;
  c->thread_count = config.threads;
  c->color_range = config.color.range == ColorRange::kFull ? AVCOL_RANGE_JPEG : AVCOL_RANGE_MPEG;
  c->colorspace = config.color.matrix == ColorMatrix::kBt709 ? AVCOL_SPC_BT709 : AVCOL_SPC_SMPTE170M;
  return s;
}

void setPrivateOption(AVCodecContext* ctx, const char* key, const char* value, const char* wrapper) {
  if (const int err = av_opt_set(ctx->priv_data, key, value, 0); err < 0) {
    throwAv(Errc::kDevice, std::string("av_opt_set(") + key + "=" + value + ")", err,
            std::string("this libavcodec's ") + wrapper + " wrapper does not take that option");
  }
}

}  // namespace zerohop::encode
