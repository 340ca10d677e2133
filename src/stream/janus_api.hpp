#pragma once
// The API form of `serve --janus HOST:PORT?mountpoint=ID`: ask Janus's HTTP transport which ports its
// RTP mountpoint listens on, so the deployment names the mountpoint once, in Janus's configuration.
//   POST /janus {"janus":"create"} -> session; POST /janus/<session> {"janus":"attach",
//   "plugin":"janus.plugin.streaming"} -> handle; POST /janus/<session>/<handle> {"janus":"message",
//   "body":{"request":"info","id":ID[,"secret":S]}} -> media[]: the video stream's port, rtcpport, pt;
//   then {"janus":"destroy"} on the session.
// Asked once, when serve starts. Thread-safety: reentrant.

#include "stream/janus_target.hpp"

namespace zerohop::stream {

/// Throws Error(kUnavailable) when Janus does not answer (or answers with an error), Error(kNotFound)
/// for an unknown mountpoint, Error(kUnsupported) when the mountpoint has no H.264 video stream or no
/// rtcpport (without one, Janus's keyframe requests could not reach the encoder).
RtpTarget lookUpJanusMountpoint(const JanusTarget& target);

}  // namespace zerohop::stream
