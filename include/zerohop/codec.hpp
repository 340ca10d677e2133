#pragma once
// What an encoded unit is: its media kind and its codec, and which track of a stream it belongs to.
// A codec is not a pixel format: PixelFormat says how the bytes of a picture (or of a share's slot) are
// laid out, a camera's MJPEG and H.264 frames included; Codec says which encoder made a unit and which
// payloader sends it.
// Thread-safety: value types and constexpr functions, reentrant.

#include <cstdint>
#include <string_view>

namespace zerohop {

enum class MediaKind : std::uint8_t { kVideo, kAudio };

enum class Codec : std::uint8_t {
  kH264,  ///< video: one H.264 Annex B access unit per unit, SPS/PPS before every IDR
  kVP8,   ///< video: one VP8 frame (RFC 6386) per unit
  kOpus,  ///< sound: one Opus packet (RFC 6716, 48 kHz) per unit
};

constexpr MediaKind mediaKindOf(Codec codec) noexcept {
  return codec == Codec::kOpus ? MediaKind::kAudio : MediaKind::kVideo;
}

/// "H264", "VP8", "opus": the names SDP's rtpmap gives them.
constexpr std::string_view codecName(Codec codec) noexcept {
  switch (codec) {
    case Codec::kH264:
      return "H264";
    case Codec::kVP8:
      return "VP8";
    case Codec::kOpus:
      return "opus";
  }
  return "unknown";
}

/// One track of a stream's encoded output: a codec and, for H.264, a rung of the camera's ladder of
/// renditions (zerohop/sinks.hpp, Rendition; 0 = the main encode; always 0 for VP8 and Opus). Each
/// track is one encode: keyframe requests and bitrate targets are per track.
struct TrackKey {
  Codec codec = Codec::kH264;
  std::uint8_t rung = 0;
  constexpr bool operator==(const TrackKey&) const = default;
};

}  // namespace zerohop
