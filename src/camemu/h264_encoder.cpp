#include "camemu/h264_encoder.hpp"

extern "C" {
#include <libavcodec/avcodec.h>
#include <libavutil/error.h>
#include <libavutil/opt.h>
}

#include <string>

#include "zerohop/error.hpp"

namespace zerohop::camemu {
namespace {

[[noreturn]] void fail(const char* call, int err) {
  char text[AV_ERROR_MAX_STRING_SIZE] = {};
  av_strerror(err, text, sizeof text);
  throw Error(Errc::kDevice, std::string(call) + " failed: " + text);
}

}  // namespace

H264Encoder::H264Encoder(std::uint32_t width, std::uint32_t height, std::uint32_t fps, bool headersEveryIdr)
    : width_(width), height_(height) {
  const AVCodec* codec = avcodec_find_encoder_by_name("libx264");
  if (!codec)
    throw Error(Errc::kUnsupported,
                "avcodec_find_encoder_by_name(libx264) failed: FFmpeg built without x264");
  try {
    ctx_ = avcodec_alloc_context3(codec);
    frame_ = av_frame_alloc();
    packet_ = av_packet_alloc();
    if (!ctx_ || !frame_ || !packet_)
      throw Error(Errc::kUnavailable, "libavcodec allocation failed: out of memory");
    ctx_->width = static_cast<int>(width);
    ctx_->height = static_cast<int>(height);
    ctx_->time_base = AVRational{1, static_cast<int>(fps)};
    ctx_->framerate = AVRational{static_cast<int>(fps), 1};
    ctx_->pix_fmt = AV_PIX_FMT_YUV420P;
    ctx_->gop_size = static_cast<int>(fps);  // an IDR every second, as webcams do
    ctx_->max_b_frames = 0;
    ctx_->bit_rate = static_cast<std::int64_t>(width) * height * fps / 10;  // ~6 Mbit/s at 1080p30
    ctx_->thread_count = 1;
    av_opt_set(ctx_->priv_data, "preset", "ultrafast", 0);
    av_opt_set(ctx_->priv_data, "tune", "zerolatency", 0);
    av_opt_set(ctx_->priv_data, "forced-idr", "1", 0);  // a requested keyframe is an IDR
    if (headersEveryIdr) {
      av_opt_set(ctx_->priv_data, "x264-params", "repeat-headers=1:annexb=1", 0);
    } else {
      // Global headers: x264 puts SPS/PPS in extradata only; the first access unit gets them below.
      ctx_->flags |= AV_CODEC_FLAG_GLOBAL_HEADER;
      av_opt_set(ctx_->priv_data, "x264-params", "annexb=1", 0);
    }
    if (int err = avcodec_open2(ctx_, codec, nullptr); err < 0) fail("avcodec_open2(libx264)", err);
    if (!headersEveryIdr && ctx_->extradata) headers_.assign(ctx_->extradata, ctx_->extradata + ctx_->extradata_size);
    frame_->format = AV_PIX_FMT_YUV420P;
    frame_->width = ctx_->width;
    frame_->height = ctx_->height;
    if (int err = av_frame_get_buffer(frame_, 0); err < 0) fail("av_frame_get_buffer", err);
  } catch (...) {
    av_packet_free(&packet_);
    av_frame_free(&frame_);
    avcodec_free_context(&ctx_);
    throw;
  }
}

H264Encoder::~H264Encoder() {
  av_packet_free(&packet_);
  av_frame_free(&frame_);
  avcodec_free_context(&ctx_);
}

const std::vector<std::uint8_t>& H264Encoder::encode(const std::uint8_t* yuyv, std::uint32_t pitch,
                                                     bool forceIdr, bool& keyframe) {
  if (int err = av_frame_make_writable(frame_); err < 0) fail("av_frame_make_writable", err);
  // YUYV 4:2:2 -> I420: luma copied, chroma averaged over each pair of rows.
  for (std::uint32_t row = 0; row < height_; ++row) {
    const std::uint8_t* s = yuyv + std::size_t{row} * pitch;
    std::uint8_t* y = frame_->data[0] + std::size_t{row} * static_cast<std::size_t>(frame_->linesize[0]);
    for (std::uint32_t x = 0; x < width_; ++x) y[x] = s[2 * x];
    if (row % 2 == 0) {
      const std::uint8_t* s2 = s + pitch;
      std::uint8_t* u =
          frame_->data[1] + std::size_t{row / 2} * static_cast<std::size_t>(frame_->linesize[1]);
      std::uint8_t* v =
          frame_->data[2] + std::size_t{row / 2} * static_cast<std::size_t>(frame_->linesize[2]);
      for (std::uint32_t x = 0; x < width_ / 2; ++x) {
        u[x] = static_cast<std::uint8_t>((s[4 * x + 1] + s2[4 * x + 1] + 1) / 2);
        v[x] = static_cast<std::uint8_t>((s[4 * x + 3] + s2[4 * x + 3] + 1) / 2);
      }
    }
  }
  frame_->pts = pts_++;
  frame_->pict_type = forceIdr ? AV_PICTURE_TYPE_I : AV_PICTURE_TYPE_NONE;
  if (int err = avcodec_send_frame(ctx_, frame_); err < 0) fail("avcodec_send_frame", err);
  out_.clear();
  out_.swap(headers_);  // headers once: the first access unit starts with SPS/PPS, later ones never do
  keyframe = false;
  for (;;) {
    const int err = avcodec_receive_packet(ctx_, packet_);
    if (err == AVERROR(EAGAIN) || err == AVERROR_EOF) break;
    if (err < 0) fail("avcodec_receive_packet", err);
    out_.insert(out_.end(), packet_->data, packet_->data + packet_->size);
    keyframe = keyframe || (packet_->flags & AV_PKT_FLAG_KEY);
    av_packet_unref(packet_);
  }
  return out_;
}

}  // namespace zerohop::camemu
