#include "vp8_input.hpp"

#include <string>

#include "zerohop/error.hpp"

namespace zerohop {

Vp8Input::Vp8Input() : converter_(makeCpuConverter()) {}

bool Vp8Input::takes(const Frame& frame) noexcept {
  return (frame.format == PixelFormat::kI420 || frame.format == PixelFormat::kNV12) &&
         frame.memory != MemoryKind::kDevice;
}

void Vp8Input::fill(const Frame& src, Frame& dst) {
  if (!takes(src)) {
    throw Error(Errc::kUnsupported, std::string("VP8 input: takes a host I420 or NV12 frame, not ") +
                                        std::string(formatName(src.format)) +
                                        (src.memory == MemoryKind::kDevice ? " in GPU memory" : ""));
  }
  if (dst.format != PixelFormat::kI420)
    throw Error(Errc::kInvalidArgument, "VP8 input: the destination must be I420");
  converter_->convert(src, dst);  // libyuv I420Copy or NV12ToI420; checks sizes and planes
  dst.times = src.times;          // not marked again: the VP8 stages are the H.264 frame's
}

}  // namespace zerohop
