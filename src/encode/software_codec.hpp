#pragma once
// What the libavcodec software encoder (libx264) sets up: find the encoder, allocate
// its context, picture and packet, fill the picture settings every live encode shares (size, pixel
// format, frame rate, keyframe interval, no B-frames, threads, colour description), set private options.
// Thread-safety: reentrant; what it returns is the caller's (thread-bound).

#include "av_handles.hpp"
#include "zerohop/encoder.hpp"

namespace zerohop::encode {

struct SoftwareCodec {
  const AVCodec* codec = nullptr;
  CodecContextPtr ctx;
  AvFramePtr picture;
  AvPacketPtr packet;
};

/// The encoder `name` ("libx264", "libvpx") with its context set from `config` (pixel format `pixFmt`;
/// keyframe interval 0 = on request only). Throws Error(kUnavailable) naming `library` when this FFmpeg
/// was built without it, Error(kDevice) when out of memory.
SoftwareCodec openSoftwareCodec(const char* name, const char* library, const EncoderConfig& config, AVPixelFormat pixFmt);

/// av_opt_set on the encoder's private options; Error(kDevice) naming `wrapper` when refused.
void setPrivateOption(AVCodecContext* ctx, const char* key, const char* value, const char* wrapper);

}  // namespace zerohop::encode
