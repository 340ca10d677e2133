#pragma once
// Reads the audio side of a WHEP viewer's SDP offer: the first audio m-section that receives
// (port != 0 or a=bundle-only, recvonly or sendrecv) and offers Opus (a=rtpmap:<pt> opus/48000/2, RFC 7587),
// which we answer with one Opus track in the same MediaStream as the video (audio_track in send_graph.hpp).
// An offer without one is served video only. Of its a=extmap lines, abs-capture-time is kept (the
// capture instant of each packet's sound, for a receiver's capture-to-playout figure; sdp_extmap.hpp).
// Pure logic on a string: no GStreamer.
// Thread-safety: reentrant.

#include <optional>
#include <string_view>
#include <vector>

#include "stream/rtp_extension_payloads.hpp"

namespace zerohop::stream {

struct AudioChoice {
  int mediaIndex = -1;   ///< index of the chosen m-line in the offer
  int payloadType = -1;  ///< the offer's Opus payload type we answer with
  int channels = 1;      ///< what the stream's packets carry (sprop-stereo=1 in the answer when 2)
  std::vector<RtpExtension> extensions;  ///< offered extensions we send on the audio track
};

/// The audio section to answer, or nullopt when the offer has no receiving audio section with Opus.
std::optional<AudioChoice> chooseAudio(std::string_view sdp);

}  // namespace zerohop::stream
