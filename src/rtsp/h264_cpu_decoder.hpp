#pragma once
// An IP camera's H.264 or H.265 access units (Annex B, parameter sets before each IDR) decoded into 4:2:0
// pictures on the CPU with libavcodec's decoder, for what needs pixels (the frame share, VP8 viewers). Low-delay: one
// access unit in, its picture out (cameras' live streams have no B-frames to reorder), one thread.
// Thread-safety: thread-bound.

#include <cstddef>
#include <cstdint>

#include "encode/av_handles.hpp"
#include "rtsp/video_codec.hpp"
#include "zerohop/frame.hpp"

namespace zerohop::rtsp {

class H264CpuDecoder {
 public:
  /// Opens libavcodec's decoder of `codec`. Throws Error(kUnsupported) if this FFmpeg has none.
  explicit H264CpuDecoder(VideoCodec codec = VideoCodec::kH264);
  /// Decodes one access unit. Returns its picture (yuv420p or yuvj420p: I420's layout), or nullptr when
  /// the unit brings none yet. Throws Error(kProtocol) on a unit the decoder refuses (FFmpeg's words) and
  /// Error(kUnsupported) on a picture that is not 8-bit 4:2:0.
  encode::AvFramePtr decode(const std::uint8_t* data, std::size_t size);

 private:
  encode::CodecContextPtr ctx_;
  encode::AvPacketPtr packet_;
  VideoCodec codec_;
};

/// A picture decode() returned, as a host I420 Frame over its planes (no copy: valid while `picture` is);
/// the caller sets its sequence, times and clock.
Frame i420View(const AVFrame& picture);

}  // namespace zerohop::rtsp
