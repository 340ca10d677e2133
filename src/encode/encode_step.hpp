#pragma once
// One frame through a no-delay libavcodec encoder (libx264 zerolatency, h264_nvenc delay=0): send the
// picture, take the single access unit it returns and fill it from the frame's metadata.
// Thread-safety: reentrant; the codec context is the caller's (thread-bound).

#include <cstdint>

#include "zerohop/encoded_unit.hpp"
#include "zerohop/encoder.hpp"

struct AVCodecContext;
struct AVFrame;
struct AVPacket;

namespace zerohop::encode {

/// Sends `pic` (pts, picture type and colour already set; unreferenced here) to `ctx` and returns the
/// access unit for `frame`: Annex B bytes, keyframe flag from the NAL types, sequence, wall clock,
/// PTS, stage times with Stage::kEncode marked. Counts into `stats`. Returns nullptr (counted as
/// emptyOutputs and logged) if the encoder produced nothing; throws Error(kInternal) if it produced
/// two units for one frame (it is buffering despite its zero-delay settings) and Error(kDevice) for
/// codec failures, naming `encoderName`.
EncodedUnitPtr encodeOneFrame(AVCodecContext* ctx, AVFrame* pic, AVPacket* packet, const Frame& frame,
                              const char* encoderName, std::uint32_t width, std::uint32_t height,
                              EncoderStats& stats);

}  // namespace zerohop::encode
