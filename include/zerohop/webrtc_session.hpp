#pragma once
// WebRtcSession: one WebRTC receiver of zerohop's H.264, for a program with signalling of its own
// (a game engine's, a WebSocket, an SFU's API): an SDP offer in, the complete answer out (every ICE
// candidate in it; no trickle), then access units pushed, exactly as a WHEP viewer of `zerohop serve`
// gets them (GStreamer webrtcbin: ICE, DTLS-SRTP, NACK/RTX, PLI -> keyframe request).
//
// It is a UnitSink, so a Pipeline or FrameStream can feed it (addUnitSink / FrameStreamConfig::sinks),
// or a program calls deliver() with units of its own (Annex B; SPS/PPS before every IDR).
// Nothing is sent before the first keyframe, and a viewer that falls behind waits for the next.
//
// Thread-safety: thread-safe. Lifetime: the destructor ends the session (the peer sees the
// transport close) and joins its threads; it may run on any thread but one of its callbacks'.

#include <chrono>
#include <functional>
#include <memory>
#include <string>

#include "zerohop/export.h"
#include "zerohop/sinks.hpp"

namespace zerohop {

struct WebRtcSessionOptions {
  /// Gather ICE candidates on 127.0.0.1 only (a viewer on this host); else every interface.
  bool loopbackOnly = false;
  /// Applying the offer, answering and gathering ICE must finish within this.
  std::chrono::milliseconds negotiationTimeout{3000};
  /// Called once when the session ends (peer left, ICE failed, RTCP silence, pipeline error), on a
  /// thread of the session's own; it must not destroy the session from there.
  std::function<void(const std::string& reason)> onEnded;
};

class ZEROHOP_API WebRtcSession final : public UnitSink {
 public:
  /// Applies `offerSdp` and answers it. Throws Error: kInvalidArgument (a malformed offer, or one
  /// webrtcbin rejects; the reason says why), kUnsupported (no H.264 the sender can send: Constrained
  /// Baseline, packetization-mode 1), kTimeout (negotiation took longer than the options allow),
  /// kUnavailable (a GStreamer element is missing).
  explicit WebRtcSession(const std::string& offerSdp, WebRtcSessionOptions options = {});
  ~WebRtcSession() override;
  WebRtcSession(const WebRtcSession&) = delete;
  WebRtcSession& operator=(const WebRtcSession&) = delete;

  /// The SDP answer to hand back to the peer.
  const std::string& answer() const noexcept;
  /// True once ICE and DTLS completed and media can flow.
  bool connected() const;
  /// Why the session should be considered over (disconnected, RTCP silence), or "" while it looks alive.
  std::string goneReason() const;

  void deliver(const EncodedUnitPtr& unit) override;
  /// The setup's requestKeyframe is called when the peer needs a keyframe (connected, PLI/FIR).
  void attach(const SinkSetup& setup) override;
  void detach() override;
  std::string describe() const override;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace zerohop
