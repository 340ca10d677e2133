#pragma once
// One frame through a no-delay libavcodec encoder (libx264 zerolatency, h264_nvenc delay=0): check and wrap a host frame, send the picture, take the single unit it returns and
// fill it from the frame's metadata.
// Thread-safety: reentrant; the codec context is the caller's (thread-bound).

#include <cstdint>

#include "zerohop/encoded_unit.hpp"
#include "zerohop/encoder.hpp"

struct AVCodecContext;
struct AVFrame;
struct AVPacket;

namespace zerohop::encode {

/// Throws Error(kInvalidArgument) unless `frame` is a host frame of `config`'s input format and size
/// with every plane present and each pitch at least a row; the message names `encoderName`.
void checkHostFrame(const Frame& frame, const EncoderConfig& config, const char* encoderName);

/// Points `pic` at `frame`'s planes without copying (a refcounted wrapper that frees nothing: the
/// encoders copy the picture before avcodec_send_frame returns) and sets its format, size, `pts`,
/// colour description from `ctx` and, when `forceKeyframe`, picture type I (an IDR / a VP8 keyframe).
void wrapHostFrame(AVFrame* pic, const Frame& frame, const AVCodecContext* ctx, std::int64_t pts, bool forceKeyframe);

/// Sends `pic` (pts, picture type and colour already set; unreferenced here) to `ctx` and returns the
/// unit for `frame` in `codec`: its bytes (H.264: Annex B), keyframe flag (H.264: from the NAL types;
/// otherwise the packet's key flag), sequence, wall clock, PTS, stage times with Stage::kEncode marked.
/// Counts into `stats`. Returns nullptr (counted as emptyOutputs and logged) if the encoder produced
/// nothing; throws Error(kInternal) if it produced two units for one frame (it is buffering despite its
/// zero-delay settings) and Error(kDevice) for codec failures, naming `encoderName`.
EncodedUnitPtr encodeOneFrame(AVCodecContext* ctx, AVFrame* pic, AVPacket* packet, const Frame& frame,
                              const char* encoderName, Codec codec, std::uint32_t width, std::uint32_t height,
                              EncoderStats& stats);

/// Fills `unit` (bytes and keyframe flag already set) from `frame`: codec, size, sequence, wall clock,
/// PTS, stage times with Stage::kEncode marked; counts it into `stats`.
void finishUnit(EncodedUnit& unit, const Frame& frame, Codec codec, std::uint32_t width, std::uint32_t height,
                EncoderStats& stats);

}  // namespace zerohop::encode
