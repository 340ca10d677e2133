// H264CpuDecoder (h264_cpu_decoder.hpp): libavcodec's H.264 or HEVC decoder, low-delay, one thread.
#include "rtsp/h264_cpu_decoder.hpp"

extern "C" {
#include <libavcodec/avcodec.h>
#include <libavutil/pixdesc.h>
}

#include <string>

#include "encode/av_error.hpp"
#include "zerohop/error.hpp"

namespace zerohop::rtsp {

H264CpuDecoder::H264CpuDecoder(VideoCodec codec) : codec_(codec) {
  const char* name = videoCodecName(codec);
  const AVCodec* decoder = avcodec_find_decoder(codec == VideoCodec::kH264 ? AV_CODEC_ID_H264 : AV_CODEC_ID_HEVC);
  if (!decoder)
    throw Error(Errc::kUnsupported, std::string("this FFmpeg's libavcodec has no ") + name +
                                        " decoder; install Debian's libavcodec59 (scripts/install-deps.sh)");
  ctx_.reset(avcodec_alloc_context3(decoder));
  packet_.reset(av_packet_alloc());
  if (!ctx_ || !packet_)
    throw Error(Errc::kInternal, "avcodec_alloc_context3/av_packet_alloc: out of memory");
  ctx_->flags |= AV_CODEC_FLAG_LOW_DELAY;
  ctx_->thread_count = 1;
  if (const int err = avcodec_open2(ctx_.get(), decoder, nullptr); err < 0)
    throw Error(Errc::kInternal, std::string("avcodec_open2(") + decoder->name + ") failed: " + encode::avErrorText(err));
}

encode::AvFramePtr H264CpuDecoder::decode(const std::uint8_t* data, std::size_t size) {
  packet_->data = const_cast<std::uint8_t*>(data);
  packet_->size = static_cast<int>(size);
  const int sent = avcodec_send_packet(ctx_.get(), packet_.get());
  packet_->data = nullptr;
  packet_->size = 0;
  if (sent < 0 && sent != AVERROR(EAGAIN))
    throw Error(Errc::kProtocol, std::string("avcodec_send_packet (") + videoCodecName(codec_) +
                                     ") refused an access unit: " + encode::avErrorText(sent));
  encode::AvFramePtr picture(av_frame_alloc());
  if (!picture) throw Error(Errc::kInternal, "av_frame_alloc: out of memory");
  const int got = avcodec_receive_frame(ctx_.get(), picture.get());
  if (got == AVERROR(EAGAIN)) return nullptr;
  if (got < 0)
    throw Error(Errc::kProtocol,
                std::string("avcodec_receive_frame (") + videoCodecName(codec_) + "): " + encode::avErrorText(got));
  const auto format = static_cast<AVPixelFormat>(picture->format);
  if (format != AV_PIX_FMT_YUV420P && format != AV_PIX_FMT_YUVJ420P) {
    const char* name = av_get_pix_fmt_name(format);
    throw Error(Errc::kUnsupported,
                std::string("the camera's ") + videoCodecName(codec_) + " decodes to " +
                    (name ? name : "an unknown format") +
                    ", and zerohop's CPU decode takes 8-bit 4:2:0 only (set the camera to " +
                    (codec_ == VideoCodec::kH264 ? "the Main or Baseline profile)" : "the Main profile, not Main 10)"));
  }
  return picture;
}

Frame i420View(const AVFrame& picture) {
  Frame f;
  f.format = PixelFormat::kI420;
  f.memory = MemoryKind::kHost;
  f.width = static_cast<std::uint32_t>(picture.width);
  f.height = static_cast<std::uint32_t>(picture.height);
  f.planeCount = 3;
  for (int i = 0; i < 3; ++i) {
    f.data[i] = picture.data[i];
    f.pitch[i] = static_cast<std::uint32_t>(picture.linesize[i]);
    f.bytesUsed += static_cast<std::size_t>(picture.linesize[i]) * (i == 0 ? f.height : (f.height + 1) / 2);
  }
  f.capacity = f.bytesUsed;
  return f;
}

}  // namespace zerohop::rtsp
