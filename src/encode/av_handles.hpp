#pragma once
// Move-only owners of libavcodec objects. The deleters are the FFmpeg free functions, which accept
// partially set-up objects and never fail.
// Thread-safety: owners are thread-bound like the objects they hold.

#include <memory>

extern "C" {
#include <libavcodec/avcodec.h>
#include <libavutil/frame.h>
}

namespace zerohop::encode {

struct CodecContextDeleter {
  void operator()(AVCodecContext* ctx) const noexcept { avcodec_free_context(&ctx); }
};
struct FrameDeleter {
  void operator()(AVFrame* frame) const noexcept { av_frame_free(&frame); }
};
struct PacketDeleter {
  void operator()(AVPacket* packet) const noexcept { av_packet_free(&packet); }
};

using CodecContextPtr = std::unique_ptr<AVCodecContext, CodecContextDeleter>;
using AvFramePtr = std::unique_ptr<AVFrame, FrameDeleter>;
using AvPacketPtr = std::unique_ptr<AVPacket, PacketDeleter>;

}  // namespace zerohop::encode
