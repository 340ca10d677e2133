#include "zerohop/ffmpeg.hpp"

extern "C" {
#include <libavutil/frame.h>
#include <libavutil/pixfmt.h>
}

namespace zerohop {

void AVFrameDeleter::operator()(AVFrame* frame) const noexcept {
  av_frame_free(&frame);
}

int toAVPixelFormat(PixelFormat format) noexcept {
  switch (format) {
    case PixelFormat::kYUYV:
      return AV_PIX_FMT_YUYV422;
    case PixelFormat::kUYVY:
      return AV_PIX_FMT_UYVY422;
    case PixelFormat::kNV12:
      return AV_PIX_FMT_NV12;
    case PixelFormat::kI420:
      return AV_PIX_FMT_YUV420P;
    case PixelFormat::kRGB24:
      return AV_PIX_FMT_RGB24;
    case PixelFormat::kBGRx:
      return AV_PIX_FMT_BGR0;
    case PixelFormat::kRGBA:
      return AV_PIX_FMT_RGBA;
    default:
      return AV_PIX_FMT_NONE;
  }
}

PixelFormat fromAVPixelFormat(int avPixelFormat) noexcept {
  switch (avPixelFormat) {
    case AV_PIX_FMT_YUYV422:
      return PixelFormat::kYUYV;
    case AV_PIX_FMT_UYVY422:
      return PixelFormat::kUYVY;
    case AV_PIX_FMT_NV12:
      return PixelFormat::kNV12;
    case AV_PIX_FMT_YUV420P:
      return PixelFormat::kI420;
    case AV_PIX_FMT_RGB24:
      return PixelFormat::kRGB24;
    case AV_PIX_FMT_BGR0:
      return PixelFormat::kBGRx;
    case AV_PIX_FMT_RGBA:
      return PixelFormat::kRGBA;
    default:
      return PixelFormat::kUnknown;
  }
}

}  // namespace zerohop
