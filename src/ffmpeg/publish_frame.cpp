// publishAVFrame: an AVFrame's planes described as a zerohop Frame and copied into a share.
#include <string>

extern "C" {
#include <libavutil/frame.h>
#include <libavutil/hwcontext.h>
#include <libavutil/pixdesc.h>
}

#include "cuda_device.hpp"
#include "zerohop/clock.hpp"
#include "zerohop/error.hpp"
#include "zerohop/ffmpeg.hpp"

namespace zerohop {

void publishAVFrame(Publisher& publisher, const AVFrame& av, std::int64_t captureNs) {
  int avFormat = av.format;
  MemoryKind memory = MemoryKind::kHost;
  void* stream = nullptr;
  if (av.format == AV_PIX_FMT_CUDA) {
    if (!av.hw_frames_ctx)
      throw Error(Errc::kInvalidArgument, "publishAVFrame: a CUDA AVFrame without hw_frames_ctx");
    avFormat = reinterpret_cast<const AVHWFramesContext*>(av.hw_frames_ctx->data)->sw_format;
    memory = MemoryKind::kDevice;
    stream = ffmpeg_detail::cudaStreamOf(av);
  }
  const PixelFormat format = fromAVPixelFormat(avFormat);
  if (format == PixelFormat::kUnknown) {
    const char* name = av_get_pix_fmt_name(static_cast<AVPixelFormat>(avFormat));
    throw Error(Errc::kUnsupported, std::string("publishAVFrame: zerohop has no format for FFmpeg's ") +
                                        (name ? name : std::to_string(avFormat)) +
                                        " (convert to nv12, yuv420p, yuyv422, uyvy422, rgb24, bgr0 or rgba)");
  }
  if (av.width <= 0 || av.height <= 0)
    throw Error(Errc::kInvalidArgument, "publishAVFrame: an AVFrame without a size");
  Frame f;
  f.format = format;
  f.width = static_cast<std::uint32_t>(av.width);
  f.height = static_cast<std::uint32_t>(av.height);
  f.memory = memory;
  f.color.range = av.color_range == AVCOL_RANGE_JPEG ? ColorRange::kFull : ColorRange::kLimited;
  f.color.matrix = av.colorspace == AVCOL_SPC_BT709 ? ColorMatrix::kBt709 : ColorMatrix::kBt601;
  f.planeCount = planeCount(format);
  for (std::uint32_t i = 0; i < f.planeCount; ++i) {
    if (!av.data[i] || av.linesize[i] <= 0) {
      throw Error(Errc::kInvalidArgument, "publishAVFrame: plane " + std::to_string(i) +
                                              " is missing or has a negative linesize (a flipped image)");
    }
    f.data[i] = av.data[i];
    f.pitch[i] = static_cast<std::uint32_t>(av.linesize[i]);
  }
  f.sequence = publisher.stats().publishes;
  f.wallClockMs = realtimeNs() / 1'000'000;
  f.times.mark(Stage::kCapture, captureNs != 0 ? captureNs : monotonicNs());
  if (memory == MemoryKind::kDevice) {
    publisher.publish(f, stream);  // on FFmpeg's stream: after whatever wrote the frame there
  } else {
    publisher.publish(f);
  }
}

}  // namespace zerohop
