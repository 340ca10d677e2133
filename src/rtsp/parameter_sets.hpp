#pragma once
// The picture size and frame rate an IP camera states in its SDP, before any media flows: the sequence
// parameter set in the video stream's fmtp (H.264: sprop-parameter-sets, RFC 6184 §8.2.1; H.265:
// sprop-vps and sprop-sps, RFC 7798 §7.1), parsed by GStreamer's codec parsers (libgstcodecparsers).
// What `zerohop probe rtsp://...` prints without playing the stream (rtsp_source.cpp, probeRtspCamera).
// Thread-safety: reentrant.

#include <optional>
#include <string>
#include <vector>

#include "rtsp/video_codec.hpp"

namespace zerohop::rtsp {

/// What a stream's parameter sets state.
struct StatedVideo {
  unsigned width = 0, height = 0;  ///< the displayed size (the SPS's cropping or conformance window applied)
  double fps = 0;                  ///< from the SPS's VUI timing; 0: it states none
};

/// `base64Units`: the fmtp's parameter sets, each one base64 NAL unit without a start code (the items of
/// sprop-parameter-sets; for H.265 those of sprop-vps, then sprop-sps). nullopt when there is no SPS, or
/// none that parses (a malformed value is not an error: the caller reads the size from the stream).
std::optional<StatedVideo> statedVideo(VideoCodec codec, const std::vector<std::string>& base64Units);

/// The comma-separated items of an fmtp value ("Z0IAH5Y1QFAe0IAAAAMAgAAAHkI=,aM4xsg==").
std::vector<std::string> spropItems(const std::string& value);

}  // namespace zerohop::rtsp
