#pragma once
// Keeps the per-answer RTX SSRC out of the names webrtcbin interns (docs/reliability.md, Soak).
// Pure logic on a string: no GStreamer, so it runs anywhere.
//
// webrtcbin (GStreamer 1.22) draws a fresh RTX (repair stream, RFC 4588) SSRC with g_random_int() for
// every answer and writes `a=ssrc:<rtx> msid:...` and `a=ssrc:<rtx> cname:...` into it. When that
// description is set as the local one, gst_sdp_media_attributes_to_caps() turns each such line into a
// caps field "ssrc-<rtx>-<attribute>": a GQuark GLib never frees, two per viewer for good. webrtcbin
// reads no `a=ssrc` line of its own local description (it sends RTX from its own SSRC map), but the
// peer needs them: Chromium refuses an `a=ssrc-group:FID <media> <rtx>` whose <rtx> has no `a=ssrc`
// line ("Failed to add remote stream ssrc"). So the lines are taken out of what webrtcbin is given and
// put back into what the peer receives, where they were.
// Thread-safety: reentrant.

#include <string>
#include <string_view>
#include <vector>

namespace zerohop::stream {

/// A description split in two: `kept`, every line but the `a=ssrc:<S> ...` lines of the SSRCs S that an
/// `a=ssrc-group:FID <media> <S>` line names as repair streams, byte for byte; and those lines.
struct RepairSsrcLines {
  std::string kept;
  /// The lines taken out (without their line ending), by media section: [0] the session part before the
  /// first m= line, [1] the first m= section, and so on.
  std::vector<std::vector<std::string>> taken;
};

RepairSsrcLines takeRepairSsrcLines(std::string_view sdp);

/// `sdp` (a description made from `split.kept`, possibly with lines added, e.g. ICE candidates) with the
/// taken lines back in each media section right after its last `a=ssrc`/`a=ssrc-group` line (where
/// webrtcbin writes them), or at the end of the section when it has none. Ends them with CRLF.
std::string withRepairSsrcLines(std::string_view sdp, const RepairSsrcLines& split);

}  // namespace zerohop::stream
