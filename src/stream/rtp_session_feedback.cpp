#include "stream/rtp_session_feedback.hpp"

#include <memory>

#include "stream/gst_handles.hpp"

namespace zerohop::stream {
namespace {

using StructurePtr = std::unique_ptr<GstStructure, decltype(&gst_structure_free)>;

GstPtr<GstElement> sessionZero(GstElement* rtpbin) {
  GstElement* raw = nullptr;
  if (rtpbin) g_signal_emit_by_name(rtpbin, "get-session", 0u, &raw);
  return GstPtr<GstElement>(raw);
}

std::optional<FeedbackReading::TransportWindow> transportWindowOf(GstElement* session) {
  if (!g_object_class_find_property(G_OBJECT_GET_CLASS(session), "twcc-stats")) return std::nullopt;
  GstStructure* raw = nullptr;
  g_object_get(session, "twcc-stats", &raw, nullptr);
  StructurePtr twcc(raw, gst_structure_free);
  FeedbackReading::TransportWindow w;
  if (!twcc || !gst_structure_get_uint(twcc.get(), "packets-sent", &w.packetsSent) ||
      !gst_structure_get_uint(twcc.get(), "packets-recv", &w.packetsReceived) || w.packetsSent == 0) {
    return std::nullopt;
  }
  gst_structure_get_double(twcc.get(), "packet-loss-pct", &w.lossPercent);
  guint sent = 0, received = 0;  // bits/s (rtptwcc.c)
  if (gst_structure_get_uint(twcc.get(), "bitrate-sent", &sent)) w.sentKbps = sent / 1000.0;
  if (gst_structure_get_uint(twcc.get(), "bitrate-recv", &received)) w.receivedKbps = received / 1000.0;
  gint64 dod = 0;
  if (gst_structure_get_int64(twcc.get(), "avg-delta-of-delta", &dod)) w.avgDeltaOfDeltaMs = dod / 1e6;
  return w;
}

// One structure of "source-stats" (rtpsource.c); nullopt without its ssrc and internal fields.
std::optional<RtpSourceStats> sourceStatsOf(const GstStructure* s) {
  RtpSourceStats out;
  guint ssrc = 0;
  gboolean internal = FALSE;
  if (!s || !gst_structure_get_uint(s, "ssrc", &ssrc) || !gst_structure_get_boolean(s, "internal", &internal))
    return std::nullopt;
  out.ssrc = ssrc;
  out.internal = internal;
  guint64 octets = 0;
  if (gst_structure_get_uint64(s, "octets-sent", &octets)) out.octetsSent = octets;
  gboolean haveRb = FALSE;
  guint rbSsrc = 0, fraction = 0, highest = 0, roundTrip = 0;
  if (gst_structure_get_boolean(s, "have-rb", &haveRb) && haveRb && gst_structure_get_uint(s, "rb-ssrc", &rbSsrc) &&
      gst_structure_get_uint(s, "rb-fractionlost", &fraction) && gst_structure_get_uint(s, "rb-exthighestseq", &highest)) {
    gst_structure_get_uint(s, "rb-round-trip", &roundTrip);
    out.haveReport = true;
    out.reportSsrc = rbSsrc;
    out.fractionLost = fraction;
    out.extHighestSeq = highest;
    out.roundTrip = roundTrip;
  }
  return out;
}

}  // namespace

std::optional<FeedbackReading::TransportWindow> readTransportWindow(GstElement* rtpbin) {
  const GstPtr<GstElement> session = sessionZero(rtpbin);
  return session ? transportWindowOf(session.get()) : std::nullopt;
}

FeedbackReading readRtpSessionFeedback(GstElement* rtpbin, std::uint32_t mediaSsrc) {
  FeedbackReading r;
  const GstPtr<GstElement> session = sessionZero(rtpbin);
  if (!session) return r;
  r.transport = transportWindowOf(session.get());
  // "stats" -> "source-stats": one structure per source: ours (internal, our SSRC) counts what we sent;
  // the viewer's holds the last report block it sent (rb-ssrc = ours).
  GstStructure* raw = nullptr;
  g_object_get(session.get(), "stats", &raw, nullptr);
  StructurePtr stats(raw, gst_structure_free);
  const GValue* sources = stats ? gst_structure_get_value(stats.get(), "source-stats") : nullptr;
  G_GNUC_BEGIN_IGNORE_DEPRECATIONS  // GValueArray is what rtpsession's "source-stats" holds in 1.22
  if (!sources || !G_VALUE_HOLDS(sources, g_value_array_get_type())) return r;
  const auto* array = static_cast<const GValueArray*>(g_value_get_boxed(sources));
  for (guint i = 0; array && i < array->n_values; ++i) {
    const GValue* v = g_value_array_get_nth(const_cast<GValueArray*>(array), i);
    const GstStructure* s = v && GST_VALUE_HOLDS_STRUCTURE(v) ? gst_value_get_structure(v) : nullptr;
    if (const std::optional<RtpSourceStats> source = sourceStatsOf(s)) addSourceStats(r, *source, mediaSsrc);
  }
  G_GNUC_END_IGNORE_DEPRECATIONS
  return r;
}

}  // namespace zerohop::stream
