#pragma once
// The VP8 encode's input: the host frame the H.264 encode took, written as I420 into a slot of the VP8
// encode's pool. From the CPU path it is I420 (a copy); from the GPU path it is the NV12 host copy of the
// VRAM frame (x264's, or the one GpuFramePath::downloadLast() made beside NVENC), which libyuv's
// NV12ToI420 turns into I420 in one pass (the luma copied, the chroma de-interleaved: lossless).
// Sequence, wall clock, colour and stage times come over unchanged (the VP8 stage times stay those of
// the frame the H.264 encode took, as /stats documents).
// Thread-safety: thread-bound (the encode thread: it holds the CPU converter's scratch state).

#include <memory>

#include "convert/converter.hpp"
#include "zerohop/frame.hpp"

namespace zerohop {

class Vp8Input {
 public:
  Vp8Input();  ///< Throws Error(kUnavailable) if the CPU converter cannot be created.
  /// True for the frames fill() takes: I420 or NV12 in host (pageable or page-locked) memory.
  static bool takes(const Frame& frame) noexcept;
  /// Writes `src` (see takes()) as I420 into `dst` (I420, the same size). Throws Error for anything else.
  void fill(const Frame& src, Frame& dst);

 private:
  std::unique_ptr<FrameConverter> converter_;
};

}  // namespace zerohop
