#pragma once
// Reads a viewer's feedback out of webrtcbin's RTP session (rtpbin's session 0: with BUNDLE a viewer's
// streams share that one RTP session): its "twcc-stats" (the last transport-cc window) and its "stats"
// -> "source-stats" (what we sent; the viewer's last report block), as the plain values of
// viewer_feedback.hpp. Thread-safety: reentrant (GStreamer's property reads lock the session).

#include <gst/gst.h>

#include <cstdint>
#include <optional>

#include "stream/viewer_feedback.hpp"

namespace zerohop::stream {

/// The last transport-cc window of `rtpbin`'s session 0; nullopt without one (no feedback yet, no
/// extension, or a GStreamer without "twcc-stats").
std::optional<FeedbackReading::TransportWindow> readTransportWindow(GstElement* rtpbin);

/// The transport window, our media source's octets and the viewer's newest report block about
/// `mediaSsrc`; nackRequests is left for the caller.
FeedbackReading readRtpSessionFeedback(GstElement* rtpbin, std::uint32_t mediaSsrc);

}  // namespace zerohop::stream
