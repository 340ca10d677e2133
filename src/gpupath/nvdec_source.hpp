#pragma once
// Internal: an H.264 (or H.265) source's access units decoded by NVDEC into NV12 frames in VRAM, as a FrameSource of
// its own (`rtsp://...?format=nv12`). The GPU path then takes the camera as it takes a program's device
// frames (FrameInput): into the device share and the encoder, no host copy on the way in. The CPU twin is
// rtsp::DecodedH264Source (`format=i420`, libavcodec).
//
// Each frame keeps its access unit's sequence, keyframe flag and times (capture from the camera's clock,
// ingest at arrival); Stage::kConvert is the time the decoded picture's copy was queued, and frame.gpu
// carries the event recorded after it. A unit NVDEC refuses (packets lost on the way) is counted as a drop
// and logged once a second at most; the picture recovers at the next IDR.
// Thread-safety: thread-bound (one thread calls next()), except counters() and requestKeyframe().
// FrameLeases are slots of the source's device pool: they may be released on any thread, and may
// outlive the source (the pool's storage lives while a lease does).
#include <memory>

#include "zerohop/gpu_decode.hpp"
#include "zerohop/source.hpp"

namespace zerohop::gpupath {

/// Returns when NVDEC decodes H.264 on CUDA device `device` (-1: device 0); else throws
/// Error(kUnavailable) with the reason and the fix (as makeNvdecSource would).
void requireNvdec(int device);

/// Takes `h264` (info().format kH264; with `codec` kH265 an H.265 camera's source, whose format is
/// kUnknown: PixelFormat has no H.265) and decodes it on CUDA device `device` (-1: device 0).
/// Throws Error(kUnavailable) with the reason and the fix when NVDEC cannot be used here: a build
/// without CUDA or without NVDEC support, no NVIDIA driver, no device. A GPU without an HEVC decoder,
/// or a Main 10 stream, is said by the first sequence header (next() throws kUnavailable/kUnsupported).
std::unique_ptr<FrameSource> makeNvdecSource(std::unique_ptr<FrameSource> h264, int device,
                                             GpuDecodeCodec codec = GpuDecodeCodec::kH264);

}  // namespace zerohop::gpupath
