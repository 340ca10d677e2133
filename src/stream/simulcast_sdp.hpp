#pragma once
// Simulcast in SDP (RFC 8853 a=simulcast, RFC 8851 a=rid) for a WHIP session that offers the camera's
// ladder as rid layers (whip_publisher.hpp): what the offer says of each layer, and which layers the
// endpoint's answer takes. webrtcbin 1.22 writes the offer's lines from caps fields but does not
// follow the answer (docs/stream.md, "Simulcast over WHIP"): the publisher reads it here and feeds
// only the layers the endpoint takes.
// Pure logic on strings: no GStreamer, so it runs anywhere.
// Thread-safety: reentrant.

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace zerohop::stream {

/// The header extensions every simulcast packet carries: its m-section's mid (RFC 8843) and its
/// layer's rid (RFC 8852), so the endpoint tells the layers apart without a=ssrc lines.
inline constexpr const char* kMidUri = "urn:ietf:params:rtp-hdrext:sdes:mid";
inline constexpr const char* kRtpStreamIdUri = "urn:ietf:params:rtp-hdrext:sdes:rtp-stream-id";
/// On a retransmission (RTX) packet: the rid of the layer it repairs (RFC 8852 §3.2), so an SFU can tell
/// which layer's RTX stream it is. rtprtxsend copies the original packet's extensions into its RTX
/// packet; the session rewrites the copied rid's id to this one's (viewer_session.cpp).
inline constexpr const char* kRepairedRtpStreamIdUri =
    "urn:ietf:params:rtp-hdrext:sdes:repaired-rtp-stream-id";
struct SimulcastExtensionIds {
  unsigned mid = 0, rid = 0, rrid = 0;
};
/// Ids for the two: the lowest (1..14, one-byte headers) that none of `taken` uses.
template <typename Extensions>
SimulcastExtensionIds simulcastExtensionIds(const Extensions& taken) {
  SimulcastExtensionIds ids;
  unsigned next = 1;
  const auto unused = [&] {
    for (;; ++next) {
      bool used = false;
      for (const auto& e : taken) used = used || static_cast<unsigned>(e.id) == next;
      if (!used) return next++;
    }
  };
  ids.mid = unused();
  ids.rid = unused();
  ids.rrid = unused();
  return ids;
}

/// The rid of layer `layer` (rung `layer` of the ladder, full size first): "h", "m", "l", then "r3", ...
/// Listed highest first in a=simulcast, the order an SFU takes by default (Janus's "hml").
std::string simulcastRid(std::size_t layer);

/// The a=mid of the first m=video section of `sdp`; empty when it has none.
std::string firstVideoMid(std::string_view sdp);

/// The rids the answer's first video m-section with a=simulcast:recv takes: each stream of the list
/// (its first alternative; a paused one, "~h", is left out) that the section also names in an
/// `a=rid:<id> recv` line, in the answer's order. Empty when the answer has no such section (the
/// endpoint takes no simulcast: send the first layer only).
std::vector<std::string> simulcastReceivedRids(std::string_view answer);

}  // namespace zerohop::stream
