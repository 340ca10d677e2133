#pragma once
// H.264 on the GPU: libavcodec's h264_nvenc fed AV_PIX_FMT_CUDA frames whose hardware frames
// context lives on the CUDA device's primary context (the pipeline's context), so NVENC reads the
// pipeline's device NV12 buffer itself: no copy to the CPU, and no copy at all when the buffer has
// NVENC's layout (chroma right after luma, same pitch). Settings for live latency: preset p1..p3
// (from EncoderConfig::preset), tune ull, zerolatency, delay 0, no B-frames, CBR with a one-frame
// VBV, SPS/PPS before every IDR, forced IDR on request, periodic IDR or intra refresh.
// Thread-safety: the encoder is thread-bound (one encode thread). docs/nvenc.md.

#include <memory>

#include "zerohop/encoder.hpp"

namespace zerohop::encode {

/// Opens h264_nvenc for `config` (validated by the caller; inputFormat kNV12, inputMemory kDevice).
/// Throws Error(kInvalidArgument) for another input, kUnavailable when this FFmpeg lacks h264_nvenc
/// or libcuda cannot be loaded, kDevice when CUDA or the codec refuses, kUnsupported in builds
/// without nv-codec-headers. Call probeNvenc() first for the reason in words.
std::unique_ptr<VideoEncoder> makeNvencEncoder(const EncoderConfig& config);

/// The NVENC preset for EncoderConfig::preset: "p1".."p7" as given, "auto" -> p1, x264 names mapped to the
/// nearest (ultrafast/superfast -> p1, veryfast/faster -> p2, fast/medium -> p3, slow -> p4, slower -> p5,
/// veryslow -> p6, placebo -> p7). Throws Error(kInvalidArgument) for anything else.
const char* nvencPreset(const std::string& preset);

}  // namespace zerohop::encode
