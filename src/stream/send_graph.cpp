#include "stream/send_graph.hpp"

#include <algorithm>
#include <string>

#include "stream/rtp_header_extensions.hpp"
#include "stream/simulcast_sdp.hpp"
#include "zerohop/error.hpp"
#include "zerohop/log.hpp"

namespace zerohop::stream {
namespace {

GstElement* makeElement(const char* factory, const char* package) {
  GstElement* e = gst_element_factory_make(factory, nullptr);
  if (!e) {
    throw Error(Errc::kUnavailable,
                std::string("gst_element_factory_make(\"") + factory +
                    "\") returned NULL: the GStreamer element is not installed; install " + package +
                    " (scripts/install-deps.sh)");
  }
  return e;
}

// The media SSRC of every session in this process, drawn once. An SSRC must be unique within one RTP
// session (one viewer's peer connection), not across viewers. Reusing it matters for memory: webrtcbin
// turns every SSRC it negotiates into GQuarks, names GLib never frees (the ssrc map's field "N" and the
// caps fields "ssrc-N-cname", "ssrc-N-msid" from gst_sdp_media_attributes_to_caps), so a fresh SSRC per
// viewer grew serve for good by ~140 bytes of heap, ~600 bytes of RSS, per session (docs/reliability.md).
guint processSsrc() {
  static const guint ssrc = g_random_int_range(1, G_MAXINT32);
  return ssrc;
}

// The audio track's SSRC: as processSsrc(), one per process, never the video's.
guint processAudioSsrc() {
  static const guint ssrc = processSsrc() == G_MAXINT32 - 1 ? 1 : processSsrc() + 1;
  return ssrc;
}

// Simulcast layer `layer` >= 1's SSRC: after the audio's, one per layer, per process as processSsrc().
guint layerSsrcOf(std::size_t layer) {
  const std::uint64_t s = static_cast<std::uint64_t>(processSsrc()) + 1 + layer;
  return static_cast<guint>(s < G_MAXINT32 ? s : s - (G_MAXINT32 - 1));
}

// The MediaStream id both tracks of a viewer carry (a=msid), so a browser plays them in sync.
constexpr const char* kStreamMsid = "zerohop";

// rtph264pay asks webrtcbin what it may send, and webrtcbin answers with the negotiated
// profile-level-id (42e01f = level 3.1), which rtph264pay turns into a level restriction on its input.
// Our encoder labels its own level (4.0 for 1080p), so answer that query here: any RTP, the level
// is the encoder's business (see docs/stream.md, "Levels").
GstPadProbeReturn answerRtpCapsQuery(GstPad*, GstPadProbeInfo* info, gpointer) {
  GstQuery* query = GST_PAD_PROBE_INFO_QUERY(info);
  if (GST_QUERY_TYPE(query) == GST_QUERY_CAPS) {
    GstCaps* filter = nullptr;
    gst_query_parse_caps(query, &filter);
    GstCaps* any = gst_caps_new_empty_simple("application/x-rtp");
    if (filter) {
      GstCaps* both = gst_caps_intersect_full(filter, any, GST_CAPS_INTERSECT_FIRST);
      gst_caps_unref(any);
      any = both;
    }
    gst_query_set_caps_result(query, any);
    gst_caps_unref(any);
    return GST_PAD_PROBE_HANDLED;
  }
  if (GST_QUERY_TYPE(query) == GST_QUERY_ACCEPT_CAPS) {
    gst_query_set_accept_caps_result(query, TRUE);
    return GST_PAD_PROBE_HANDLED;
  }
  return GST_PAD_PROBE_OK;
}

// The header extension `ext` on payloader `pay`, which writes it, and an extmap-<id> field in the
// transceiver's preferences `prefs`, which is what puts a=extmap:<id> <uri> in the answer (webrtcbin
// keeps what both the offer and the preferences have, so the offer's id is used). Null, and nothing
// added, for a URI we do not send.
GstPtr<GstRTPHeaderExtension> addRtpExtension(GstElement* pay, GstCaps* prefs, const RtpExtension& ext,
                                              PlayoutDelay playoutDelay) {
  GstPtr<GstRTPHeaderExtension> element(makeRtpExtension(ext, playoutDelay));
  if (!element) return element;
  gst_object_ref_sink(element.get());  // the new element's floating reference becomes ours
  g_signal_emit_by_name(pay, "add-extension", element.get());
  gst_structure_set(gst_caps_get_structure(prefs, 0), ("extmap-" + std::to_string(ext.id)).c_str(),
                    G_TYPE_STRING, ext.uri.c_str(), nullptr);
  return element;
}

}  // namespace

SendGraph::SendGraph(const std::string& name, const VideoChoice& choice, bool loopbackIce,
                     const SessionIce& ice, const SendOptions& send) {
  if (choice.hasVideo()) payloader_ = trackPayloaderFor(choice.codec);
  ensureGstInit();
  pipeline_.reset(GST_ELEMENT(gst_object_ref_sink(gst_pipeline_new(name.c_str()))));
  webrtc_ = makeElement("webrtcbin", "gstreamer1.0-plugins-bad and gstreamer1.0-nice");
  gst_bin_add(GST_BIN(pipeline_.get()), webrtc_);
  // The system clock is CLOCK_MONOTONIC, the clock EncodedUnit::ptsNs is in.
  GstClock* clock = gst_system_clock_obtain();
  gst_pipeline_use_clock(GST_PIPELINE(pipeline_.get()), clock);
  gst_object_unref(clock);
  configureIce(loopbackIce, ice);
  // Sender reports map each track's RTP timestamps to the NTP clock at the capture instant (the buffer's
  // running time), not at the send time (rtpbin's default): the audio packet leaves a 20 ms frame and
  // an encode after its first sample, the picture an encode after its capture, and with send times that
  // difference (~16 ms measured, scripts/bench-av-sync.py) reached every receiver's lip sync.
  if (GstPtr<GstElement> rtpbin{gst_bin_get_by_name(GST_BIN(webrtc_), "rtpbin")};
      rtpbin && g_object_class_find_property(G_OBJECT_GET_CLASS(rtpbin.get()), "rtcp-sync-send-time")) {
    g_object_set(rtpbin.get(), "rtcp-sync-send-time", FALSE, nullptr);
  }
  if (choice.hasVideo()) addVideoTrack(choice, send);
  if (choice.audio) addAudioTrack(*choice.audio);
  if (!appsrc_ && !audioAppsrc_)
    throw Error(Errc::kInvalidArgument, "a viewer's choice with neither video nor sound");
}

SendGraph::~SendGraph() { stop(); }

void SendGraph::play() {
  if (gst_element_set_state(pipeline_.get(), GST_STATE_PLAYING) == GST_STATE_CHANGE_FAILURE) {
    gst_element_set_state(pipeline_.get(), GST_STATE_NULL);
    throw Error(Errc::kUnavailable,
                "gst_element_set_state(viewer pipeline, PLAYING) failed (see GStreamer's log, GST_DEBUG=3)");
  }
}

void SendGraph::stop() {
  if (pipeline_) gst_element_set_state(pipeline_.get(), GST_STATE_NULL);
}

void SendGraph::configureIce(bool loopbackIce, const SessionIce& servers) {
  gst_util_set_object_arg(G_OBJECT(webrtc_), "bundle-policy", "max-bundle");
  // STUN/TURN (serve --ice-server; ice_servers.hpp). The URLs carry credentials: never logged.
  stunOrTurn_ = !servers.stunServer.empty() || !servers.turnServers.empty();
  if (!servers.stunServer.empty()) g_object_set(webrtc_, "stun-server", servers.stunServer.c_str(), nullptr);
  for (const std::string& turn : servers.turnServers) {
    gboolean added = FALSE;
    g_signal_emit_by_name(webrtc_, "add-turn-server", turn.c_str(), &added);
    if (!added) {
      const std::size_t at = turn.rfind('@');
      throw Error(Errc::kInvalidArgument, "webrtcbin refused the TURN server " +
                                              (at == std::string::npos ? turn : turn.substr(at + 1)) +
                                              " (add-turn-server failed; see GST_DEBUG=webrtcbin:5)");
    }
  }
  GstWebRTCICE* rawIce = nullptr;
  g_object_get(webrtc_, "ice-agent", &rawIce, nullptr);
  GstPtr<GstWebRTCICE> ice(rawIce);
  if (!ice) return;
  if (g_object_class_find_property(G_OBJECT_GET_CLASS(ice.get()), "ice-tcp")) {
    g_object_set(ice.get(), "ice-tcp", FALSE, nullptr);
  }
  if (loopbackIce) {
    gboolean added = FALSE;
    g_signal_emit_by_name(ice.get(), "add-local-ip-address", "127.0.0.1", &added);
    if (!added) log::warn("stream: could not add 127.0.0.1 to the ICE agent; loopback viewers may not connect");
  }
  // A fixed UDP port range for firewalls (serve --udp-ports): libnice's host candidates take their
  // ports from it (with bundle and rtcp-mux, one port per viewer).
  if (servers.maxPort != 0 && g_object_class_find_property(G_OBJECT_GET_CLASS(ice.get()), "min-rtp-port")) {
    g_object_set(ice.get(), "min-rtp-port", static_cast<guint>(servers.minPort), "max-rtp-port",
                 static_cast<guint>(servers.maxPort), nullptr);
  }
  // Binding requests (not indications) as keepalives, so libnice can notice a vanished viewer; in
  // practice (libnice 0.1.21) the viewer's RTCP timeout ends such a session first (~25-30 s).
  GObject* agent = nullptr;
  if (g_object_class_find_property(G_OBJECT_GET_CLASS(ice.get()), "agent")) {
    g_object_get(ice.get(), "agent", &agent, nullptr);
  }
  if (agent) {
    if (g_object_class_find_property(G_OBJECT_GET_CLASS(agent), "keepalive-conncheck")) {
      g_object_set(agent, "keepalive-conncheck", TRUE, nullptr);
    }
    // No UPnP port mapping: it spawns a discovery thread per viewer and probes the LAN.
    if (g_object_class_find_property(G_OBJECT_GET_CLASS(agent), "upnp")) {
      g_object_set(agent, "upnp", FALSE, nullptr);
    }
    g_object_unref(agent);
  }
}

void SendGraph::addVideoTrack(const VideoChoice& choice, const SendOptions& send) {
  const TrackPayloader& strategy = *payloader_;
  const std::size_t layers = std::max<std::size_t>(1, choice.simulcastRids.size());
  // A fixed SSRC known before any media flows, so the answer's a=ssrc / a=ssrc-group:FID lines name
  // the stream the viewer will receive (webrtcbin takes it from the codec preferences below).
  ssrc_ = processSsrc();
  GstCapsPtr prefs(gst_caps_new_simple(
      "application/x-rtp", "media", G_TYPE_STRING, strategy.media(), "encoding-name", G_TYPE_STRING,
      strategy.encodingName(), "clock-rate", G_TYPE_INT, strategy.clockRate(), "payload", G_TYPE_INT,
      choice.payloadType, "rtcp-fb-nack", G_TYPE_BOOLEAN, TRUE, "rtcp-fb-nack-pli", G_TYPE_BOOLEAN, TRUE,
      "rtcp-fb-ccm-fir", G_TYPE_BOOLEAN, TRUE, "ssrc", G_TYPE_UINT, static_cast<guint>(ssrc_), nullptr));
  strategy.addPreferences(prefs.get(), choice);
  GstPtr<GstPad> sinkPad(gst_element_request_pad_simple(webrtc_, "sink_%u"));
  if (!sinkPad) throw Error(Errc::kInternal, "webrtcbin gave no sink_%u pad");
  videoSinkPad_.reset(GST_PAD(gst_object_ref(sinkPad.get())));
  // Simulcast: the layers' packets meet in an rtpfunnel (one SSRC each) in front of the one sink pad.
  GstElement* funnel = nullptr;
  if (layers > 1) {
    funnel = makeElement("rtpfunnel", "gstreamer1.0-plugins-good");
    gst_bin_add(GST_BIN(pipeline_.get()), funnel);
    payloaderSrc_.reset(gst_element_get_static_pad(funnel, "src"));
    if (gst_pad_link(payloaderSrc_.get(), sinkPad.get()) != GST_PAD_LINK_OK)
      throw Error(Errc::kInternal, "gst_pad_link(rtpfunnel:src, webrtcbin:sink_%u) failed");
  }
  const SimulcastExtensionIds simulcastIds = simulcastExtensionIds(choice.extensions);
  if (funnel) simulcastIds_ = simulcastIds;
  for (std::size_t layer = 0; layer < layers; ++layer) {
    GstElement* appsrc = makeElement("appsrc", "gstreamer1.0-plugins-base");
    gst_bin_add(GST_BIN(pipeline_.get()), appsrc);
    GstElement* pay = makeElement(strategy.element(), strategy.package());
    gst_bin_add(GST_BIN(pipeline_.get()), pay);
    GstCapsPtr srcCaps(gst_caps_from_string(strategy.unitCaps()));
    g_object_set(appsrc, "caps", srcCaps.get(), "is-live", TRUE, "format", GST_FORMAT_TIME, "do-timestamp",
                 FALSE, "max-bytes", static_cast<guint64>(0), "block", FALSE, nullptr);
    const std::uint32_t ssrc = layer == 0 ? ssrc_ : layerSsrcOf(layer);
    g_object_set(pay, "pt", static_cast<guint>(choice.payloadType), "ssrc", static_cast<guint>(ssrc),
                 nullptr);
    strategy.configure(pay);
    if (!gst_element_link(appsrc, pay)) {
      throw Error(Errc::kInternal,
                  std::string("gst_element_link(appsrc, ") + strategy.element() + ") failed");
    }
    if (layer == 0) {
      appsrc_ = appsrc;
    } else {
      layerAppsrcs_.push_back(appsrc);
      layerSsrcs_.push_back(ssrc);
    }
    GstPtr<GstPad> paySrc(gst_element_get_static_pad(pay, "src"));
    gst_pad_add_probe(paySrc.get(), GST_PAD_PROBE_TYPE_QUERY_DOWNSTREAM, answerRtpCapsQuery, nullptr,
                      nullptr);
    if (funnel) {
      GstPtr<GstPad> funnelSink(gst_element_request_pad_simple(funnel, "sink_%u"));
      if (!funnelSink || gst_pad_link(paySrc.get(), funnelSink.get()) != GST_PAD_LINK_OK)
        throw Error(Errc::kInternal, "gst_pad_link(payloader:src, rtpfunnel:sink_%u) failed");
    } else {
      payloaderSrc_ = std::move(paySrc);
      if (gst_pad_link(payloaderSrc_.get(), sinkPad.get()) != GST_PAD_LINK_OK)
        throw Error(Errc::kInternal, "gst_pad_link(payloader:src, webrtcbin:sink_%u) failed");
    }
    // The header extensions: each layer's payloader writes them into its own packets; the preferences
    // (one set) put a=extmap lines in the SDP.
    for (const RtpExtension& ext : choice.extensions) {
      if (ext.uri == kPlayoutDelayUri && send.omitPlayoutDelay) continue;
      GstPtr<GstRTPHeaderExtension> element = addRtpExtension(pay, prefs.get(), ext, send.playoutDelay);
      if (!element || layer != 0) continue;
      if (ext.uri == kPlayoutDelayUri) playoutDelayExt_ = std::move(element);
      if (ext.uri == kTransportWideCcUri && choice.transportCcFeedback)
        gst_caps_set_simple(prefs.get(), "rtcp-fb-transport-cc", G_TYPE_BOOLEAN, TRUE, nullptr);
    }
    if (funnel) addSimulcastExtensions(pay, prefs.get(), simulcastIds, choice.simulcastRids[layer]);
  }
  if (funnel) {
    // a=rid:<id> send for each layer and a=simulcast:send h;m;l (libgstsdp writes caps fields "rid-<id>"
    // and "a-<attribute>" as these lines).
    std::string list;
    for (const std::string& rid : choice.simulcastRids) {
      gst_caps_set_simple(prefs.get(), ("rid-" + rid).c_str(), G_TYPE_STRING, "send", nullptr);
      list += (list.empty() ? "" : ";") + rid;
    }
    gst_caps_set_simple(prefs.get(), "a-simulcast", G_TYPE_STRING, ("send " + list).c_str(), nullptr);
  }
  GstWebRTCRTPTransceiver* rawTrans = nullptr;
  g_object_get(sinkPad.get(), "transceiver", &rawTrans, nullptr);
  videoTransceiver_.reset(rawTrans);
  if (!videoTransceiver_) throw Error(Errc::kInternal, "webrtcbin sink pad has no transceiver");
  g_object_set(videoTransceiver_.get(), "direction", GST_WEBRTC_RTP_TRANSCEIVER_DIRECTION_SENDONLY, "do-nack",
               TRUE, "codec-preferences", prefs.get(), nullptr);
}

void SendGraph::addSimulcastExtensions(GstElement* pay, GstCaps* prefs, const SimulcastExtensionIds& ids,
                                       const std::string& rid) {
  GstElement* mid = makeElement("rtphdrextmid", "gstreamer1.0-plugins-good");
  GstElement* streamId = makeElement("rtphdrextstreamid", "gstreamer1.0-plugins-good");
  GstPtr<GstRTPHeaderExtension> midExt(GST_RTP_HEADER_EXTENSION(gst_object_ref_sink(mid)));
  GstPtr<GstRTPHeaderExtension> ridExt(GST_RTP_HEADER_EXTENSION(gst_object_ref_sink(streamId)));
  gst_rtp_header_extension_set_id(midExt.get(), ids.mid);
  gst_rtp_header_extension_set_id(ridExt.get(), ids.rid);
  g_object_set(ridExt.get(), "rid", rid.c_str(), nullptr);
  g_signal_emit_by_name(pay, "add-extension", midExt.get());
  g_signal_emit_by_name(pay, "add-extension", ridExt.get());
  GstStructure* s = gst_caps_get_structure(prefs, 0);
  gst_structure_set(s, ("extmap-" + std::to_string(ids.mid)).c_str(), G_TYPE_STRING, kMidUri, nullptr);
  gst_structure_set(s, ("extmap-" + std::to_string(ids.rid)).c_str(), G_TYPE_STRING, kRtpStreamIdUri,
                    nullptr);
  gst_structure_set(s, ("extmap-" + std::to_string(ids.rrid)).c_str(), G_TYPE_STRING, kRepairedRtpStreamIdUri,
                    nullptr);
  midExtensions_.push_back(std::move(midExt));
}

void SendGraph::writeMid(const std::string& mid) {
  for (const auto& ext : midExtensions_) g_object_set(ext.get(), "mid", mid.c_str(), nullptr);
}

void SendGraph::addAudioTrack(const AudioChoice& audio) {
  audioPayloader_ = opusTrackPayloader(audio.channels);
  const TrackPayloader& strategy = *audioPayloader_;
  GstElement* appsrc = makeElement("appsrc", "gstreamer1.0-plugins-base");
  gst_bin_add(GST_BIN(pipeline_.get()), appsrc);
  GstElement* pay = makeElement(strategy.element(), strategy.package());
  gst_bin_add(GST_BIN(pipeline_.get()), pay);
  audioAppsrc_ = appsrc;
  GstCapsPtr srcCaps(gst_caps_from_string(strategy.unitCaps()));
  g_object_set(appsrc, "caps", srcCaps.get(), "is-live", TRUE, "format", GST_FORMAT_TIME, "do-timestamp", FALSE,
               "max-bytes", static_cast<guint64>(0), "block", FALSE, nullptr);
  audioSsrc_ = processAudioSsrc();
  g_object_set(pay, "pt", static_cast<guint>(audio.payloadType), "ssrc", static_cast<guint>(audioSsrc_), nullptr);
  strategy.configure(pay);
  if (!gst_element_link(appsrc, pay)) {
    throw Error(Errc::kInternal, std::string("gst_element_link(appsrc, ") + strategy.element() + ") failed");
  }
  GstPtr<GstPad> sinkPad(gst_element_request_pad_simple(webrtc_, "sink_%u"));
  GstPtr<GstPad> paySrc(gst_element_get_static_pad(pay, "src"));
  if (!sinkPad || gst_pad_link(paySrc.get(), sinkPad.get()) != GST_PAD_LINK_OK) {
    throw Error(Errc::kInternal, "gst_pad_link(rtpopuspay:src, webrtcbin:sink_%u) failed");
  }
  if (!payloaderSrc_) payloaderSrc_.reset(GST_PAD(gst_object_ref(paySrc.get())));  // sound alone
  // One MediaStream for both tracks: the answer's a=msid lines name the same stream id.
  if (g_object_class_find_property(G_OBJECT_GET_CLASS(sinkPad.get()), "msid")) {
    g_object_set(sinkPad.get(), "msid", kStreamMsid, nullptr);
    if (videoSinkPad_) g_object_set(videoSinkPad_.get(), "msid", kStreamMsid, nullptr);
  }
  GstWebRTCRTPTransceiver* rawTrans = nullptr;
  g_object_get(sinkPad.get(), "transceiver", &rawTrans, nullptr);
  GstPtr<GstWebRTCRTPTransceiver> trans(rawTrans);
  if (!trans) throw Error(Errc::kInternal, "webrtcbin sink pad has no transceiver");
  GstCapsPtr prefs(gst_caps_new_simple("application/x-rtp", "media", G_TYPE_STRING, strategy.media(),
                                       "encoding-name", G_TYPE_STRING, strategy.encodingName(), "clock-rate",
                                       G_TYPE_INT, strategy.clockRate(), "payload", G_TYPE_INT, audio.payloadType,
                                       "ssrc", G_TYPE_UINT, static_cast<guint>(audioSsrc_), nullptr));
  strategy.addPreferences(prefs.get(), VideoChoice{});
  // abs-capture-time when offered (audio_offer.hpp): each packet's capture instant, which the payloader
  // reads from the buffer's reference timestamp (wrapEncodedUnit) as the video's does.
  for (const RtpExtension& ext : audio.extensions) addRtpExtension(pay, prefs.get(), ext, PlayoutDelay{});
  g_object_set(trans.get(), "direction", GST_WEBRTC_RTP_TRANSCEIVER_DIRECTION_SENDONLY, "codec-preferences",
               prefs.get(), nullptr);
}

}  // namespace zerohop::stream
