#include "stream/rtp_sender.hpp"

#include <netdb.h>
#include <sys/socket.h>

#include "stream/track_payloader.hpp"
#include "zerohop/error.hpp"
#include "zerohop/log.hpp"

namespace zerohop::stream {
namespace {

GstElement* addElement(GstElement* pipeline, const char* factory, const char* package) {
  GstElement* e = gst_element_factory_make(factory, nullptr);
  if (!e) {
    throw Error(Errc::kUnavailable, std::string("gst_element_factory_make(\"") + factory +
                                        "\") returned NULL: install " + package +
                                        " (scripts/install-deps.sh)");
  }
  gst_bin_add(GST_BIN(pipeline), e);
  return e;
}

// The numeric address of `host` (udpsink resolves names itself, but the RTCP socket's family and a
// clear error at start need it here).
std::string resolve(const std::string& host, bool& ipv6) {
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_DGRAM;
  addrinfo* result = nullptr;
  const int gai = getaddrinfo(host.c_str(), nullptr, &hints, &result);
  if (gai != 0 || !result) {
    throw Error(Errc::kInvalidArgument, "getaddrinfo(\"" + host + "\") failed: " + gai_strerror(gai));
  }
  char text[NI_MAXHOST] = {};
  getnameinfo(result->ai_addr, result->ai_addrlen, text, sizeof text, nullptr, 0, NI_NUMERICHOST);
  ipv6 = result->ai_family == AF_INET6;
  freeaddrinfo(result);
  return text;
}

void linkPads(GstElement* a, const char* padA, GstElement* b, const char* padB) {
  GstPtr<GstPad> src(gst_element_get_static_pad(a, padA));
  if (!src) src.reset(gst_element_request_pad_simple(a, padA));
  GstPtr<GstPad> sink(gst_element_get_static_pad(b, padB));
  if (!sink) sink.reset(gst_element_request_pad_simple(b, padB));
  if (!src || !sink || gst_pad_link(src.get(), sink.get()) != GST_PAD_LINK_OK) {
    throw Error(Errc::kInternal, std::string("gst_pad_link(") + padA + ", " + padB + ") failed");
  }
}

}  // namespace

RtpSender::RtpSender(RtpTarget target, std::function<void()> onKeyframeRequest)
    : target_(std::move(target)), onKeyframeRequest_(std::move(onKeyframeRequest)) {
  ensureGstInit();
  bool ipv6 = false;
  const std::string address = resolve(target_.host, ipv6);

  pipeline_.reset(GST_ELEMENT(gst_object_ref_sink(gst_pipeline_new("zerohop-rtp"))));
  GstElement* pipe = pipeline_.get();
  GstClock* clock = gst_system_clock_obtain();  // CLOCK_MONOTONIC, the clock of EncodedUnit::ptsNs
  gst_pipeline_use_clock(GST_PIPELINE(pipe), clock);
  gst_object_unref(clock);

  appsrc_ = addElement(pipe, "appsrc", "gstreamer1.0-plugins-base");
  GstElement* pay = addElement(pipe, "rtph264pay", "gstreamer1.0-plugins-good");
  GstElement* rtpbin = addElement(pipe, "rtpbin", "gstreamer1.0-plugins-good");
  GstElement* rtpSink = addElement(pipe, "udpsink", "gstreamer1.0-plugins-good");
  GstElement* rtcpSink = addElement(pipe, "udpsink", "gstreamer1.0-plugins-good");
  GstElement* rtcpSrc = addElement(pipe, "udpsrc", "gstreamer1.0-plugins-good");

  GstCapsPtr srcCaps(gst_caps_from_string("video/x-h264,stream-format=byte-stream,alignment=au"));
  g_object_set(appsrc_, "caps", srcCaps.get(), "is-live", TRUE, "format", GST_FORMAT_TIME, "do-timestamp",
               FALSE, "max-bytes", static_cast<guint64>(0), "block", FALSE, nullptr);
  g_object_set(pay, "pt", static_cast<guint>(target_.payloadType), "config-interval", -1, "mtu", 1200u,
               nullptr);
  gst_util_set_object_arg(G_OBJECT(pay), "aggregate-mode", "zero-latency");
  g_object_set(rtpSink, "host", address.c_str(), "port", static_cast<gint>(target_.rtpPort), "sync", FALSE,
               "async", FALSE, nullptr);
  g_object_set(rtcpSink, "host", address.c_str(), "port", static_cast<gint>(target_.rtcpPort), "sync", FALSE,
               "async", FALSE, "close-socket", FALSE, nullptr);
  GstCapsPtr rtcpCaps(gst_caps_from_string("application/x-rtcp"));
  g_object_set(rtcpSrc, "address", ipv6 ? "::" : "0.0.0.0", "port", 0, "caps", rtcpCaps.get(), nullptr);

  if (!gst_element_link(appsrc_, pay))
    throw Error(Errc::kInternal, "gst_element_link(appsrc, rtph264pay) failed");
  linkPads(pay, "src", rtpbin, "send_rtp_sink_0");
  linkPads(rtpbin, "send_rtp_src_0", rtpSink, "sink");
  linkPads(rtpbin, "send_rtcp_src_0", rtcpSink, "sink");
  linkPads(rtcpSrc, "src", rtpbin, "recv_rtcp_sink_0");

  // RTCP goes out of the socket it comes in on: open udpsrc's socket now and lend it to the sink.
  if (gst_element_set_state(rtcpSrc, GST_STATE_READY) == GST_STATE_CHANGE_FAILURE) {
    throw Error(Errc::kUnavailable, "udpsrc (RTCP from the receiver) could not bind a UDP port");
  }
  GObject* socket = nullptr;
  g_object_get(rtcpSrc, "used-socket", &socket, nullptr);
  gint localPort = 0;
  g_object_get(rtcpSrc, "port", &localPort, nullptr);
  if (socket) {
    g_object_set(rtcpSink, "socket", socket, nullptr);
    g_object_unref(socket);
  }
  rtcpLocalPort_ = static_cast<std::uint16_t>(localPort);

  // RTCP every second rather than every 5 s, so the receiver learns our RTCP address soon.
  GObject* session = nullptr;
  g_signal_emit_by_name(rtpbin, "get-internal-session", 0u, &session);
  if (session) {
    g_object_set(session, "rtcp-min-interval", static_cast<guint64>(GST_SECOND), nullptr);
    g_object_unref(session);
  }

  if (target_.audioPort != 0) addSound(pipe, rtpbin, address);

  feed_ = std::make_unique<AppsrcFeed>(appsrc_, pipe, kMaxQueuedUnits);
  GstPtr<GstPad> appsrcPad(gst_element_get_static_pad(appsrc_, "src"));
  gst_pad_add_probe(appsrcPad.get(), GST_PAD_PROBE_TYPE_EVENT_UPSTREAM, onUpstreamEvent, this, nullptr);

  if (gst_element_set_state(pipe, GST_STATE_PLAYING) == GST_STATE_CHANGE_FAILURE) {
    gst_element_set_state(pipe, GST_STATE_NULL);
    throw Error(Errc::kUnavailable,
                "gst_element_set_state(RTP sender, PLAYING) failed (GST_DEBUG=3 says why)");
  }
  log::info("janus: sending RTP H.264 (pt ", target_.payloadType, ") to ", address, ":", target_.rtpPort,
            ", RTCP to port ", target_.rtcpPort, " from local port ", rtcpLocalPort_,
            target_.audioPort != 0 ? "; the sound (Opus, pt " + std::to_string(target_.audioPayloadType) +
                                         ") to port " + std::to_string(target_.audioPort)
                                   : std::string());
}

void RtpSender::addSound(GstElement* pipe, GstElement* rtpbin, const std::string& address) {
  // The WHEP viewers' Opus strategy: the same payloader and appsrc caps.
  // The caps stay mono: rtpopuspay does not touch the packets (a stereo TOC stays stereo), and what the
  // receiver is told is the Janus mountpoint's own SDP (its audiofmtp), not these caps.
  const auto opus = opusTrackPayloader();
  GstElement* src = addElement(pipe, "appsrc", "gstreamer1.0-plugins-base");
  GstElement* pay = addElement(pipe, opus->element(), opus->package());
  GstElement* sink = addElement(pipe, "udpsink", "gstreamer1.0-plugins-good");
  GstCapsPtr caps(gst_caps_from_string(opus->unitCaps()));
  g_object_set(src, "caps", caps.get(), "is-live", TRUE, "format", GST_FORMAT_TIME, "do-timestamp", FALSE,
               "max-bytes", static_cast<guint64>(0), "block", FALSE, nullptr);
  opus->configure(pay);
  g_object_set(pay, "pt", static_cast<guint>(target_.audioPayloadType), nullptr);
  g_object_set(sink, "host", address.c_str(), "port", static_cast<gint>(target_.audioPort), "sync", FALSE, "async",
               FALSE, nullptr);
  if (!gst_element_link(src, pay))
    throw Error(Errc::kInternal, std::string("gst_element_link(appsrc, ") + opus->element() + ") failed");
  linkPads(pay, "src", rtpbin, "send_rtp_sink_1");
  linkPads(rtpbin, "send_rtp_src_1", sink, "sink");
  if (target_.audioRtcpPort != 0) {
    GstElement* rtcpSink = addElement(pipe, "udpsink", "gstreamer1.0-plugins-good");
    g_object_set(rtcpSink, "host", address.c_str(), "port", static_cast<gint>(target_.audioRtcpPort), "sync", FALSE,
                 "async", FALSE, nullptr);
    linkPads(rtpbin, "send_rtcp_src_1", rtcpSink, "sink");
  }
  soundFeed_ = std::make_unique<AppsrcFeed>(src, pipe, kMaxQueuedSound);
}

void RtpSender::pushAudio(const EncodedUnitPtr& opusPacket) {
  if (soundFeed_ && opusPacket) (void)soundFeed_->push(opusPacket);  // every packet is a "keyframe"
}

RtpSender::~RtpSender() {
  if (pipeline_) gst_element_set_state(pipeline_.get(), GST_STATE_NULL);
}

void RtpSender::push(const EncodedUnitPtr& unit) {
  if (feed_->push(unit)) requestKeyframe();
}

std::uint64_t RtpSender::keyframeRequests() const {
  return keyframeRequests_.load();
}

void RtpSender::requestKeyframe() {
  keyframeRequests_.fetch_add(1);
  if (onKeyframeRequest_) onKeyframeRequest_();
}

GstPadProbeReturn RtpSender::onUpstreamEvent(GstPad*, GstPadProbeInfo* info, gpointer data) {
  GstEvent* event = GST_PAD_PROBE_INFO_EVENT(info);
  if (event && GST_EVENT_TYPE(event) == GST_EVENT_CUSTOM_UPSTREAM &&
      gst_event_has_name(event, "GstForceKeyUnit")) {
    log::debug("janus: the receiver asked for a keyframe (RTCP PLI/FIR)");
    static_cast<RtpSender*>(data)->requestKeyframe();
  }
  return GST_PAD_PROBE_OK;
}

}  // namespace zerohop::stream
