#pragma once
// Where `serve --janus` sends RTP: a Janus streaming-plugin RTP mountpoint (docs/stream.md, "Janus"),
// named one of two ways:
//   HOST:PORT?mountpoint=ID[&secret=S]   HOST:PORT is Janus's HTTP transport (base path /janus); serve
//                                        asks the streaming plugin ("info") for the mountpoint's video
//                                        port, rtcpport and payload type (janus_api.cpp)
//   HOST:PORT[?rtcp=PORT&pt=N&audio=APORT]
//                                        PORT is the mountpoint's video port itself; RTCP (for Janus's
//                                        keyframe requests) at PORT+1 unless `rtcp=`; `pt` default 96;
//                                        `audio=`: the sound (Opus, pt 111) to APORT, its RTCP to APORT+1
// HOST may be [IPv6]. Pure logic on a string. Thread-safety: reentrant.

#include <cstdint>
#include <string>
#include <string_view>

namespace zerohop::stream {

struct RtpTarget {
  std::string host;  ///< without brackets
  std::uint16_t rtpPort = 0;
  std::uint16_t rtcpPort = 0;
  int payloadType = 96;
  /// The sound (Opus), when the receiver takes it: 0 = none. RTCP (sender reports) to audioRtcpPort
  /// when it is not 0.
  std::uint16_t audioPort = 0;
  std::uint16_t audioRtcpPort = 0;
  int audioPayloadType = 111;
};

struct JanusTarget {
  /// The direct form: where RTP and RTCP go. The API form: host only (the ports come from Janus).
  RtpTarget rtp;
  std::uint64_t mountpoint = 0;  ///< non-zero: the API form
  std::uint16_t apiPort = 0;     ///< the API form: Janus's HTTP port
  std::string secret;            ///< the API form: the mountpoint's secret, if it has one
};

/// Throws Error(kInvalidArgument) naming the part that is wrong.
JanusTarget parseJanusTarget(std::string_view spec);

}  // namespace zerohop::stream
