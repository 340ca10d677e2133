#pragma once
// A passed-through camera's pictures decoded on the CPU (libavcodec's H.264 decoder, rtsp::H264CpuDecoder)
// into I420 in host memory, each picture kept copied once into the frame share (host I420 at the
// camera's size). The GPU's twin: gpupath::makeNvdecPassthroughDecoder.
// Thread-safety: thread-bound (the pictures thread).

#include <memory>

#include "gpupath/passthrough_decoder.hpp"
#include "zerohop/source.hpp"

namespace zerohop {

/// Throws Error(kUnsupported) where this FFmpeg has no H.264 decoder. `framesShare` may be null.
std::unique_ptr<PassthroughDecoder> makeCpuPassthroughDecoder(const SourceInfo& source,
                                                              Publisher* framesShare);

}  // namespace zerohop
