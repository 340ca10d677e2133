#pragma once
// Puts an SsrcGate (ssrc_gate.hpp) in front of webrtcbin's SRTP decoder: a pad probe on the source pad
// of each nicesrc inside the webrtcbin, the first element a datagram from the peer meets after libnice
// (which keeps STUN to itself). What the gate refuses is dropped there, before the queue, dtlssrtpdec's
// srtpdec (a libsrtp stream per new SSRC) and rtpbin (a source per SSRC) see it.
// Thread-safety: thread-bound to the caller of webrtcbin's negotiation; the probes run on the transport's
// streaming thread and hold the gate (a shared reference) for as long as they exist.

#include <gst/gst.h>

#include <cstddef>
#include <memory>

#include "stream/ssrc_gate.hpp"

namespace zerohop::stream {

/// Attaches `gate` to every nicesrc of `webrtcbin` that has no gate yet; returns how many have one now
/// (the transports webrtcbin has made so far: one with BUNDLE). Call it once the description that
/// creates the transports is set, before the peer can know where to send (our description is not out yet).
std::size_t attachSsrcGate(GstElement* webrtcbin, const std::shared_ptr<SsrcGate>& gate);

}  // namespace zerohop::stream
