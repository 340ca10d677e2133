// H264CpuDecoder (h264_cpu_decoder.hpp): libavcodec's H.264 decoder, low-delay, one thread.
#include "rtsp/h264_cpu_decoder.hpp"

extern "C" {
#include <libavcodec/avcodec.h>
#include <libavutil/pixdesc.h>
}

#include <string>

#include "encode/av_error.hpp"
#include "zerohop/error.hpp"

namespace zerohop::rtsp {

H264CpuDecoder::H264CpuDecoder() {
  const AVCodec* codec = avcodec_find_decoder(AV_CODEC_ID_H264);
  if (!codec)
    throw Error(Errc::kUnsupported,
                "this FFmpeg's libavcodec has no H.264 decoder; install Debian's libavcodec59 "
                "(scripts/install-deps.sh)");
  ctx_.reset(avcodec_alloc_context3(codec));
  packet_.reset(av_packet_alloc());
  if (!ctx_ || !packet_)
    throw Error(Errc::kInternal, "avcodec_alloc_context3/av_packet_alloc: out of memory");
  ctx_->flags |= AV_CODEC_FLAG_LOW_DELAY;
  ctx_->thread_count = 1;
  if (const int err = avcodec_open2(ctx_.get(), codec, nullptr); err < 0)
    throw Error(Errc::kInternal, "avcodec_open2(h264) failed: " + encode::avErrorText(err));
}

encode::AvFramePtr H264CpuDecoder::decode(const std::uint8_t* data, std::size_t size) {
  packet_->data = const_cast<std::uint8_t*>(data);
  packet_->size = static_cast<int>(size);
  const int sent = avcodec_send_packet(ctx_.get(), packet_.get());
  packet_->data = nullptr;
  packet_->size = 0;
  if (sent < 0 && sent != AVERROR(EAGAIN))
    throw Error(Errc::kProtocol,
                "avcodec_send_packet (H.264) refused an access unit: " + encode::avErrorText(sent));
  encode::AvFramePtr picture(av_frame_alloc());
  if (!picture) throw Error(Errc::kInternal, "av_frame_alloc: out of memory");
  const int got = avcodec_receive_frame(ctx_.get(), picture.get());
  if (got == AVERROR(EAGAIN)) return nullptr;
  if (got < 0) throw Error(Errc::kProtocol, "avcodec_receive_frame (H.264): " + encode::avErrorText(got));
  const auto format = static_cast<AVPixelFormat>(picture->format);
  if (format != AV_PIX_FMT_YUV420P && format != AV_PIX_FMT_YUVJ420P) {
    const char* name = av_get_pix_fmt_name(format);
    throw Error(Errc::kUnsupported,
                std::string("the camera's H.264 decodes to ") + (name ? name : "an unknown format") +
                    ", and zerohop's CPU decode takes 8-bit 4:2:0 only (set the camera to "
                    "the Main or Baseline profile)");
  }
  return picture;
}

}  // namespace zerohop::rtsp
