#pragma once
// The video codecs zerohop takes from an IP camera (RtspSession selects the first such stream).
// Thread-safety: plain values.

#include <cstdint>

namespace zerohop::rtsp {

enum class VideoCodec : std::uint8_t { kH264, kH265 };
/// "H.264", "H.265".
const char* videoCodecName(VideoCodec codec) noexcept;

}  // namespace zerohop::rtsp
