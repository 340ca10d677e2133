#pragma once
// An IP camera's H.264 access units (Annex B, SPS/PPS before each IDR) decoded into 4:2:0 pictures on the
// CPU with libavcodec's decoder, for what needs pixels (the frame share, VP8 viewers). Low-delay: one
// access unit in, its picture out (cameras' live streams have no B-frames to reorder), one thread.
// Thread-safety: thread-bound.

#include <cstddef>
#include <cstdint>

#include "encode/av_handles.hpp"

namespace zerohop::rtsp {

class H264CpuDecoder {
 public:
  /// Opens libavcodec's H.264 decoder. Throws Error(kUnsupported) if this FFmpeg has none.
  H264CpuDecoder();
  /// Decodes one access unit. Returns its picture (yuv420p or yuvj420p: I420's layout), or nullptr when
  /// the unit brings none yet. Throws Error(kProtocol) on a unit the decoder refuses (FFmpeg's words) and
  /// Error(kUnsupported) on a picture that is not 8-bit 4:2:0.
  encode::AvFramePtr decode(const std::uint8_t* data, std::size_t size);

 private:
  encode::CodecContextPtr ctx_;
  encode::AvPacketPtr packet_;
};

}  // namespace zerohop::rtsp
