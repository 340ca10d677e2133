#include "stream/viewer_session.hpp"

#include <gst/app/gstappsrc.h>
#include <gst/rtp/gstrtpbuffer.h>

#include <algorithm>
#include <string>
#include <thread>
#include <utility>

#include "stream/glib_handoff.hpp"
#include "stream/rtp_appsrc_feed.hpp"
#include "stream/rtp_header_extensions.hpp"
#include "stream/sdp_repair_ssrc.hpp"
#include "stream/sdp_sections.hpp"
#include "stream/ssrc_gate_probe.hpp"
#include "stream/webrtc_warmup.hpp"
#include "zerohop/clock.hpp"
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

// A description of `type` from SDP text; empty when the text is not SDP (the caller says whose it was).
SessionDescriptionPtr descriptionFromText(GstWebRTCSDPType type, const std::string& text) {
  GstSDPMessage* raw = nullptr;
  const GstSDPResult parsed = gst_sdp_message_new_from_text(text.c_str(), &raw);
  GstSdpMessagePtr sdp(raw);
  if (parsed != GST_SDP_OK || !sdp) return SessionDescriptionPtr();
  return SessionDescriptionPtr(gst_webrtc_session_description_new(type, sdp.release()));
}

const char* connectionStateName(GstWebRTCPeerConnectionState s) {
  switch (s) {
    case GST_WEBRTC_PEER_CONNECTION_STATE_NEW:
      return "new";
    case GST_WEBRTC_PEER_CONNECTION_STATE_CONNECTING:
      return "connecting";
    case GST_WEBRTC_PEER_CONNECTION_STATE_CONNECTED:
      return "connected";
    case GST_WEBRTC_PEER_CONNECTION_STATE_DISCONNECTED:
      return "disconnected";
    case GST_WEBRTC_PEER_CONNECTION_STATE_FAILED:
      return "failed";
    case GST_WEBRTC_PEER_CONNECTION_STATE_CLOSED:
      return "closed";
  }
  return "?";
}

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

}  // namespace

// Shared between a GstPromise's change callback and the thread waiting on it, so a reply that
// arrives after the waiter gave up touches nothing freed.
struct ViewerSession::Waiter {
  std::mutex mutex;
  std::condition_variable cv;
  bool done = false;

  using Ref = GlibHandoff<std::shared_ptr<Waiter>>;  // travels to webrtcbin's thread (glib_handoff.hpp)

  static void onChange(GstPromise*, gpointer data) {
    auto& w = *static_cast<Ref*>(data)->get();
    std::lock_guard lock(w.mutex);
    w.done = true;
    w.cv.notify_all();
  }
  static void destroy(gpointer data) { delete static_cast<Ref*>(data); }
};

ViewerSession::ViewerSession(std::string id, VideoChoice choice, bool loopbackIce, Events events,
                             const SessionIce& iceServers, SendOptions send)
    : id_(std::move(id)), choice_(std::move(choice)), createdNs_(monotonicNs()), events_(std::move(events)) {
  ensureGstInit();
  pipeline_.reset(
      GST_ELEMENT(gst_object_ref_sink(gst_pipeline_new(("zerohop-viewer-" + id_.substr(0, 8)).c_str()))));
  GstElement* appsrc = makeElement("appsrc", "gstreamer1.0-plugins-base");
  gst_bin_add(GST_BIN(pipeline_.get()), appsrc);
  const bool vp8 = choice_.codec == PixelFormat::kVP8;
  GstElement* pay = makeElement(vp8 ? "rtpvp8pay" : "rtph264pay", "gstreamer1.0-plugins-good");
  gst_bin_add(GST_BIN(pipeline_.get()), pay);
  GstElement* webrtc = makeElement("webrtcbin", "gstreamer1.0-plugins-bad and gstreamer1.0-nice");
  gst_bin_add(GST_BIN(pipeline_.get()), webrtc);
  appsrc_ = appsrc;
  webrtc_ = webrtc;

  // The system clock is CLOCK_MONOTONIC, the clock EncodedUnit::ptsNs is in.
  GstClock* clock = gst_system_clock_obtain();
  gst_pipeline_use_clock(GST_PIPELINE(pipeline_.get()), clock);
  gst_object_unref(clock);

  GstCapsPtr srcCaps(gst_caps_from_string(vp8 ? "video/x-vp8" : "video/x-h264,stream-format=byte-stream,alignment=au"));
  g_object_set(appsrc, "caps", srcCaps.get(), "is-live", TRUE, "format", GST_FORMAT_TIME, "do-timestamp",
               FALSE, "max-bytes", static_cast<guint64>(0), "block", FALSE, nullptr);
  // A fixed SSRC known before any media flows, so the answer's a=ssrc / a=ssrc-group:FID lines name
  // the stream the viewer will receive (webrtcbin takes it from the codec preferences below).
  const guint ssrc = processSsrc();
  ssrc_ = ssrc;
  g_object_set(pay, "pt", static_cast<guint>(choice_.payloadType), "ssrc", ssrc, nullptr);
  if (vp8) {
    // The 15-bit PictureID (RFC 7741 §4.2) that browsers' VP8 receivers use to tell lost frames apart.
    gst_util_set_object_arg(G_OBJECT(pay), "picture-id-mode", "15-bit");
  } else {
    g_object_set(pay, "config-interval", -1, nullptr);
    gst_util_set_object_arg(G_OBJECT(pay), "aggregate-mode", "zero-latency");
  }
  gst_util_set_object_arg(G_OBJECT(webrtc), "bundle-policy", "max-bundle");
  // STUN/TURN (serve --ice-server; ice_servers.hpp). The URLs carry credentials: never logged.
  stunOrTurn_ = !iceServers.stunServer.empty() || !iceServers.turnServers.empty();
  if (!iceServers.stunServer.empty())
    g_object_set(webrtc, "stun-server", iceServers.stunServer.c_str(), nullptr);
  for (const std::string& turn : iceServers.turnServers) {
    gboolean added = FALSE;
    g_signal_emit_by_name(webrtc, "add-turn-server", turn.c_str(), &added);
    if (!added) {
      const std::size_t at = turn.rfind('@');
      throw Error(Errc::kInvalidArgument, "webrtcbin refused the TURN server " +
                                              (at == std::string::npos ? turn : turn.substr(at + 1)) +
                                              " (add-turn-server failed; see GST_DEBUG=webrtcbin:5)");
    }
  }

  if (!gst_element_link(appsrc, pay)) {
    throw Error(Errc::kInternal, std::string("gst_element_link(appsrc, ") + (vp8 ? "rtpvp8pay" : "rtph264pay") + ") failed");
  }

  GstPtr<GstPad> sinkPad(gst_element_request_pad_simple(webrtc, "sink_%u"));
  GstPtr<GstPad> paySrc(gst_element_get_static_pad(pay, "src"));
  if (!sinkPad || gst_pad_link(paySrc.get(), sinkPad.get()) != GST_PAD_LINK_OK) {
    throw Error(Errc::kInternal, "gst_pad_link(payloader:src, webrtcbin:sink_%u) failed");
  }
  gst_pad_add_probe(paySrc.get(), GST_PAD_PROBE_TYPE_QUERY_DOWNSTREAM, answerRtpCapsQuery, nullptr, nullptr);
  GstWebRTCRTPTransceiver* rawTrans = nullptr;
  g_object_get(sinkPad.get(), "transceiver", &rawTrans, nullptr);
  GstPtr<GstWebRTCRTPTransceiver> trans(rawTrans);
  if (!trans) throw Error(Errc::kInternal, "webrtcbin sink pad has no transceiver");
  GstCapsPtr prefs(gst_caps_new_simple(
      "application/x-rtp", "media", G_TYPE_STRING, "video", "encoding-name", G_TYPE_STRING, vp8 ? "VP8" : "H264",
      "clock-rate", G_TYPE_INT, 90000, "payload", G_TYPE_INT, choice_.payloadType, "rtcp-fb-nack",
      G_TYPE_BOOLEAN, TRUE, "rtcp-fb-nack-pli", G_TYPE_BOOLEAN, TRUE, "rtcp-fb-ccm-fir", G_TYPE_BOOLEAN, TRUE,
      "ssrc", G_TYPE_UINT, ssrc, nullptr));
  if (!vp8) {
    // RFC 6184 §8.2.2: the answer keeps the offered profile; its level is the level the answerer receives
    // (with level-asymmetry-allowed=1 in both) or at most the offer's (without). We receive no video, so
    // the offered id is the honest answer either way, and level-asymmetry-allowed=1 is echoed when offered.
    // The level we send is the offerer's receive level by §8.1; when the stream's is higher
    // (choice_.levelCovered false) the viewer was told nothing else in SDP: /stats and the log say it.
    gst_caps_set_simple(prefs.get(), "packetization-mode", G_TYPE_STRING, "1", "profile-level-id", G_TYPE_STRING,
                        choice_.profileLevelId.c_str(), nullptr);
    if (choice_.levelAsymmetryAllowed)
      gst_caps_set_simple(prefs.get(), "level-asymmetry-allowed", G_TYPE_STRING, "1", nullptr);
  }
  // The header extensions: an extmap-<id> field in the preferences is what puts a=extmap:<id> <uri> in
  // the answer (webrtcbin keeps what both the offer and the preferences have, so the offer's id is
  // used); the payloader writes them.
  for (const RtpExtension& ext : choice_.extensions) {
    if (ext.uri == kPlayoutDelayUri && send.omitPlayoutDelay) continue;
    GstPtr<GstRTPHeaderExtension> element(makeRtpExtension(ext, send.playoutDelay));
    if (!element) continue;
    gst_object_ref_sink(element.get());  // the new element's floating reference becomes ours
    g_signal_emit_by_name(pay, "add-extension", element.get());
    if (ext.uri == kPlayoutDelayUri) playoutDelayExt_.reset(GST_RTP_HEADER_EXTENSION(gst_object_ref(element.get())));
    gst_structure_set(gst_caps_get_structure(prefs.get(), 0), ("extmap-" + std::to_string(ext.id)).c_str(),
                      G_TYPE_STRING, ext.uri.c_str(), nullptr);
    if (ext.uri == kTransportWideCcUri && choice_.transportCcFeedback)
      gst_caps_set_simple(prefs.get(), "rtcp-fb-transport-cc", G_TYPE_BOOLEAN, TRUE, nullptr);
  }
  g_object_set(trans.get(), "direction", GST_WEBRTC_RTP_TRANSCEIVER_DIRECTION_SENDONLY, "do-nack", TRUE,
               "codec-preferences", prefs.get(), nullptr);

  GstWebRTCICE* rawIce = nullptr;
  g_object_get(webrtc, "ice-agent", &rawIce, nullptr);
  GstPtr<GstWebRTCICE> ice(rawIce);
  if (ice) {
    if (g_object_class_find_property(G_OBJECT_GET_CLASS(ice.get()), "ice-tcp")) {
      g_object_set(ice.get(), "ice-tcp", FALSE, nullptr);
    }
    if (loopbackIce) {
      gboolean added = FALSE;
      g_signal_emit_by_name(ice.get(), "add-local-ip-address", "127.0.0.1", &added);
      if (!added)
        log::warn("stream: could not add 127.0.0.1 to the ICE agent; loopback viewers may not connect");
    }
    // A fixed UDP port range for firewalls (serve --udp-ports): libnice's host candidates take their
    // ports from it (with bundle and rtcp-mux, one port per viewer).
    if (iceServers.maxPort != 0 &&
        g_object_class_find_property(G_OBJECT_GET_CLASS(ice.get()), "min-rtp-port")) {
      g_object_set(ice.get(), "min-rtp-port", static_cast<guint>(iceServers.minPort), "max-rtp-port",
                   static_cast<guint>(iceServers.maxPort), nullptr);
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

  // After webrtcbin's rtprtxsend (it makes one per RTP session): an element of ours that sees every
  // packet going out and every retransmission request coming back, so requests the budget refuses
  // never reach rtprtxsend (retransmission_budget.hpp).
  g_signal_connect(webrtc, "request-aux-sender", G_CALLBACK(onRequestAuxSender), this);

  published_.store(true, std::memory_order_release);  // before any callback can run: see fromGst()
  g_signal_connect(webrtc, "notify::connection-state", G_CALLBACK(onConnectionState), this);
  g_signal_connect(webrtc, "notify::ice-connection-state", G_CALLBACK(onIceConnectionState), this);
  g_signal_connect(webrtc, "notify::ice-gathering-state", G_CALLBACK(onIceGatheringState), this);
  rtpbin_.reset(gst_bin_get_by_name(GST_BIN(webrtc), "rtpbin"));
  if (rtpbin_) {
    g_signal_connect(rtpbin_.get(), "on-bye-ssrc", G_CALLBACK(onBye), this);
    g_signal_connect(rtpbin_.get(), "on-timeout", G_CALLBACK(onTimeout), this);
    g_signal_connect(rtpbin_.get(), "on-ssrc-active", G_CALLBACK(onSsrcActive), this);
    g_signal_connect(rtpbin_.get(), "on-new-ssrc", G_CALLBACK(onNewSsrc), this);
  }
  GstPtr<GstPad> appsrcPad(gst_element_get_static_pad(appsrc, "src"));
  gst_pad_add_probe(appsrcPad.get(), GST_PAD_PROBE_TYPE_EVENT_UPSTREAM, onUpstreamEvent, this, nullptr);
  gst_pad_add_probe(paySrc.get(),
                    static_cast<GstPadProbeType>(GST_PAD_PROBE_TYPE_BUFFER | GST_PAD_PROBE_TYPE_BUFFER_LIST),
                    onFirstPacket, this, nullptr);
  feed_ = std::make_unique<AppsrcFeed>(appsrc, pipeline_.get(), kMaxQueuedUnits);
  GstPtr<GstBus> bus(gst_element_get_bus(pipeline_.get()));
  gst_bus_set_sync_handler(bus.get(), onBusMessage, this, nullptr);

  if (gst_element_set_state(pipeline_.get(), GST_STATE_PLAYING) == GST_STATE_CHANGE_FAILURE) {
    gst_element_set_state(pipeline_.get(), GST_STATE_NULL);
    throw Error(Errc::kUnavailable,
                "gst_element_set_state(viewer pipeline, PLAYING) failed (see GStreamer's log, "
                "GST_DEBUG=3)");
  }
}

ViewerSession* ViewerSession::fromGst(gpointer data) {
  auto* self = static_cast<ViewerSession*>(data);
  (void)self->published_.load(std::memory_order_acquire);
  return self;
}

ViewerSession::~ViewerSession() {
  {
    std::lock_guard lock(callbackMutex_);
    alive_ = false;
  }
  abort();
  g_signal_handlers_disconnect_by_data(webrtc_, this);
  if (rtpbin_) g_signal_handlers_disconnect_by_data(rtpbin_.get(), this);
  gst_element_set_state(pipeline_.get(), GST_STATE_NULL);
  // The streaming threads are stopped now, through GLib's futex locks, which ThreadSanitizer cannot
  // see: taking the callback lock again orders the last callback that still ran before the stop
  // (it found alive_ false) before this object is freed.
  { std::lock_guard lock(callbackMutex_); }
  { std::lock_guard lock(signalMutex_); }  // the state-notify callbacks (found by TSan: a log line read id_)
  { std::lock_guard lock(rtxMutex_); }  // the same for the retransmission probes
  if (GObject* session = std::exchange(rtcpSession_, nullptr)) {
    g_signal_handlers_disconnect_by_data(session, this);
    g_object_unref(session);
  }
  GstPtr<GstBus> bus(gst_element_get_bus(pipeline_.get()));
  gst_bus_set_sync_handler(bus.get(), nullptr, nullptr, nullptr);
  rtpbin_.reset();
  pipeline_.reset();
}

void ViewerSession::abort() {
  std::lock_guard lock(waitMutex_);
  aborted_ = true;
  waitCv_.notify_all();
}

GstPromisePtr ViewerSession::callWebrtc(const char* signal, gpointer arg, Deadline deadline,
                                        std::chrono::milliseconds timeout) {
  auto waiter = std::make_shared<Waiter>();
  GstPromisePtr promise(gst_promise_new_with_change_func(
      Waiter::onChange, new Waiter::Ref(waiter), Waiter::destroy));
  g_signal_emit_by_name(webrtc_, signal, arg, promise.get());
  std::unique_lock lock(waiter->mutex);
  while (!waiter->done) {
    {
      std::lock_guard abortLock(waitMutex_);
      if (aborted_) {
        lock.unlock();
        gst_promise_interrupt(promise.get());
        throw Error(Errc::kUnavailable, std::string("webrtcbin ") + signal + ": the server is shutting down");
      }
    }
    if (std::chrono::steady_clock::now() >= deadline) {
      lock.unlock();
      gst_promise_interrupt(promise.get());
      throw Error(Errc::kTimeout, std::string("webrtcbin ") + signal + " did not complete within " +
                                      std::to_string(timeout.count()) + " ms");
    }
    waiter->cv.wait_for(lock, std::chrono::milliseconds(20));
  }
  lock.unlock();
  if (gst_promise_wait(promise.get()) != GST_PROMISE_RESULT_REPLIED) {
    throw Error(Errc::kUnavailable, std::string("webrtcbin ") + signal + " was interrupted");
  }
  const GstStructure* reply = gst_promise_get_reply(promise.get());
  if (reply && gst_structure_has_field(reply, "error")) {
    GError* raw = nullptr;
    gst_structure_get(reply, "error", G_TYPE_ERROR, &raw, nullptr);
    GErrorPtr err(raw);
    throw Error(Errc::kInvalidArgument,
                std::string("webrtcbin ") + signal + " failed: " + (err ? err->message : "unknown error"));
  }
  return promise;
}

void ViewerSession::setRemote(GstWebRTCSDPType type, const std::string& sdp, Deadline deadline,
                              std::chrono::milliseconds timeout) {
  const SessionDescriptionPtr desc = descriptionFromText(type, sdp);
  if (!desc) {
    throw Error(Errc::kInvalidArgument, std::string("gst_sdp_message_new_from_text failed: the ") +
                                            (type == GST_WEBRTC_SDP_TYPE_OFFER ? "offer" : "answer") +
                                            " is not SDP");
  }
  callWebrtc("set-remote-description", desc.get(), deadline, timeout);
}

std::string ViewerSession::describeLocally(const char* create, Deadline deadline, std::chrono::milliseconds timeout) {
  const bool offer = std::string(create) == "create-offer";
  GstPromisePtr promise = callWebrtc(create, nullptr, deadline, timeout);
  GstWebRTCSessionDescription* rawDesc = nullptr;
  const GstStructure* reply = gst_promise_get_reply(promise.get());
  if (!reply ||
      !gst_structure_get(reply, offer ? "offer" : "answer", GST_TYPE_WEBRTC_SESSION_DESCRIPTION, &rawDesc,
                         nullptr) ||
      !rawDesc) {
    throw Error(Errc::kUnsupported, std::string("webrtcbin ") + create + " returned no description");
  }
  const SessionDescriptionPtr made(rawDesc);
  // Set without the per-answer RTX SSRC's a=ssrc lines, which webrtcbin would intern as names for good;
  // they go back into the text the peer receives (sdp_repair_ssrc.hpp).
  GCharPtr madeText(gst_sdp_message_as_text(made->sdp));
  const RepairSsrcLines repair = takeRepairSsrcLines(madeText.get());
  const SessionDescriptionPtr desc = descriptionFromText(made->type, repair.kept);
  if (!desc) throw Error(Errc::kInternal, "gst_sdp_message_new_from_text failed on webrtcbin's own description");
  callWebrtc("set-local-description", desc.get(), deadline, timeout);
  gateInbound();  // the transports exist now; the peer cannot send before it has this description

  {
    std::unique_lock lock(waitMutex_);
    GstWebRTCICEGatheringState state{};
    g_object_get(webrtc_, "ice-gathering-state", &state, nullptr);
    if (state == GST_WEBRTC_ICE_GATHERING_STATE_COMPLETE) gatheringComplete_ = true;
    if (!waitCv_.wait_until(lock, deadline, [this] { return gatheringComplete_ || aborted_; })) {
      // A STUN/TURN server that does not answer keeps gathering open for its retransmissions (~25 s
      // in libnice): answer with the candidates found so far, so the direct path still works.
      if (!stunOrTurn_) {
        throw Error(Errc::kTimeout, "ICE gathering did not complete within " +
                                        std::to_string(timeout.count()) + " ms (no usable network interface?)");
      }
      log::warn("stream: viewer ", id_.substr(0, 8), ": ICE gathering incomplete after ", timeout.count(),
                " ms: a STUN/TURN server (--ice-server) did not answer; answering with the candidates found "
                "so far");
    } else if (!gatheringComplete_) {
      throw Error(Errc::kUnavailable, "negotiation aborted: the server is shutting down");
    }
  }

  recalculateLatency();

  GstWebRTCSessionDescription* rawLocal = nullptr;
  g_object_get(webrtc_, "local-description", &rawLocal, nullptr);
  SessionDescriptionPtr local(rawLocal);
  if (!local || !local->sdp)
    throw Error(Errc::kInternal, "webrtcbin has no local description after negotiation");
  GCharPtr text(gst_sdp_message_as_text(local->sdp));
  return withRepairSsrcLines(text.get(), repair);
}

// The process's DTLS certificate is made once, in the first dtlsdec (webrtc_warmup.hpp); a session
// negotiating meanwhile would block inside webrtcbin until it exists. That wait (0.3-1 s, over 3 s under
// ASan on a busy box) is not webrtcbin hanging, so it happens first, before the timeout starts.
std::string ViewerSession::negotiate(const std::string& offerSdp, std::chrono::milliseconds timeout) {
  waitForStartedWarmUp();
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  if (choice_.mediaIndex < 0) {
    setRemote(GST_WEBRTC_SDP_TYPE_OFFER, offerSdp, deadline, timeout);
    return describeLocally("create-answer", deadline, timeout);
  }
  // webrtcbin sees the chosen video section only: it would accept an m=application (data channels, an
  // SCTP association per viewer) and receive offered audio. The others are answered rejected.
  const OfferCut cut = keepOnlySection(offerSdp, choice_.mediaIndex);
  if (!cut.rejectedKinds.empty()) {
    std::string kinds;
    for (const std::string& k : cut.rejectedKinds) kinds += (kinds.empty() ? "m=" : ", m=") + k;
    log::info("stream: viewer ", id_.substr(0, 8), ": rejected (port 0) what this server does not send or take: ",
              kinds);
  }
  setRemote(GST_WEBRTC_SDP_TYPE_OFFER, cut.offer, deadline, timeout);
  return withRejectedSections(describeLocally("create-answer", deadline, timeout), cut);
}

std::string ViewerSession::createOffer(std::chrono::milliseconds timeout) {
  waitForStartedWarmUp();  // as in negotiate()
  return describeLocally("create-offer", std::chrono::steady_clock::now() + timeout, timeout);
}

void ViewerSession::applyAnswer(const std::string& answerSdp, std::chrono::milliseconds timeout) {
  setRemote(GST_WEBRTC_SDP_TYPE_ANSWER, answerSdp, std::chrono::steady_clock::now() + timeout, timeout);
}

void ViewerSession::gateInbound() {
  if (attachSsrcGate(webrtc_, inboundGate_) == 0) {
    log::warn("stream: viewer ", id_.substr(0, 8), ": no nicesrc found in webrtcbin to filter what the peer sends; "
              "junk with fresh SSRCs reaches the SRTP decoder unbounded (a GStreamer other than 1.22?)");
  }
}

void ViewerSession::push(const EncodedUnitPtr& unit) {
  if (!connected_.load() || !unit || unit->bytes.empty() || unit->codec != choice_.codec) return;
  if (unit->keyframe) {
    keyframeDeferred_.store(false);
  } else if (keyframeDeferred_.load() && keyframeLimit_.allow(monotonicNs())) {
    keyframeDeferred_.store(false);
    requestKeyframe();
  }
  if (feed_->push(unit)) {
    log::debug("stream: viewer ", id_.substr(0, 8), " fell behind; dropping until the next keyframe");
    requestKeyframe();
  }
}

void ViewerSession::requestKeyframe() {
  std::lock_guard lock(callbackMutex_);
  if (alive_ && events_.onKeyframeRequest) events_.onKeyframeRequest();
}

void ViewerSession::end(const std::string& reason) {
  std::lock_guard lock(callbackMutex_);
  if (!alive_ || ended_) return;
  ended_ = true;
  connected_.store(false);
  if (events_.onEnded) events_.onEnded(reason);
}

void ViewerSession::onConnectionState(GstElement* webrtc, GParamSpec*, gpointer data) {
  auto* self = fromGst(data);
  std::lock_guard scope(self->signalMutex_);
  GstWebRTCPeerConnectionState state{};
  g_object_get(webrtc, "connection-state", &state, nullptr);
  log::debug("stream: viewer ", self->id_.substr(0, 8), " connection ", connectionStateName(state));
  if (state == GST_WEBRTC_PEER_CONNECTION_STATE_CONNECTED) {
    self->noteDisconnected(false);
    self->feed_->waitForKeyframe();
    std::lock_guard lock(self->callbackMutex_);
    if (!self->alive_ || self->ended_) return;
    std::int64_t never = 0;
    self->connectedNs_.compare_exchange_strong(never, monotonicNs());
    self->connected_.store(true);
    if (self->events_.onConnected) self->events_.onConnected();
  } else if (state == GST_WEBRTC_PEER_CONNECTION_STATE_FAILED ||
             state == GST_WEBRTC_PEER_CONNECTION_STATE_CLOSED) {
    self->end(std::string("peer connection ") + connectionStateName(state));
  } else if (state == GST_WEBRTC_PEER_CONNECTION_STATE_DISCONNECTED) {
    self->noteDisconnected(true);
  }
}

void ViewerSession::onIceConnectionState(GstElement* webrtc, GParamSpec*, gpointer data) {
  auto* self = fromGst(data);
  std::lock_guard scope(self->signalMutex_);
  GstWebRTCICEConnectionState state{};
  g_object_get(webrtc, "ice-connection-state", &state, nullptr);
  if (state == GST_WEBRTC_ICE_CONNECTION_STATE_FAILED)
    self->end("ICE failed (the viewer is unreachable or left)");
  if (state == GST_WEBRTC_ICE_CONNECTION_STATE_CLOSED) self->end("ICE closed");
  if (state == GST_WEBRTC_ICE_CONNECTION_STATE_DISCONNECTED) self->noteDisconnected(true);
  if (state == GST_WEBRTC_ICE_CONNECTION_STATE_CONNECTED || state == GST_WEBRTC_ICE_CONNECTION_STATE_COMPLETED)
    self->noteDisconnected(false);
}

void ViewerSession::noteDisconnected(bool disconnected) {
  if (!disconnected) {
    disconnectedSinceNs_.store(0);
    return;
  }
  std::int64_t notYet = 0;
  if (disconnectedSinceNs_.compare_exchange_strong(notYet, monotonicNs()))
    log::debug("stream: viewer ", id_.substr(0, 8), " disconnected; ending it unless it is back within ",
               kDisconnectGrace.count(), " s");
}

std::string ViewerSession::goneReason(std::int64_t nowNs) const {
  using std::chrono::nanoseconds;
  const std::int64_t since = disconnectedSinceNs_.load();
  if (since != 0 && nanoseconds(nowNs - since) > kDisconnectGrace) {
    return "disconnected for more than " + std::to_string(kDisconnectGrace.count()) + " s";
  }
  const std::int64_t connectedAt = connectedNs_.load();
  if (connectedAt == 0) return {};  // not connected yet: the owner's connect timeout applies
  const std::int64_t last = lastRtcpNs_.load();
  // Before the first report, the longest silence any receiver may keep.
  const nanoseconds allowed = last == 0 ? nanoseconds(kRtcpSilenceMax)
                                        : std::clamp(nanoseconds(4 * longestRtcpGapNs_.load()),
                                                     nanoseconds(kRtcpSilence), nanoseconds(kRtcpSilenceMax));
  const nanoseconds silent(nowNs - std::max(connectedAt, last));
  if (silent > allowed) {
    return "no RTCP from the viewer for " +
           std::to_string(std::chrono::duration_cast<std::chrono::milliseconds>(silent).count()) +
           " ms, its reports had come at most " + std::to_string(longestRtcpGapNs_.load() / 1000000) +
           " ms apart (it vanished)";
  }
  return {};
}

void ViewerSession::onIceGatheringState(GstElement* webrtc, GParamSpec*, gpointer data) {
  auto* self = fromGst(data);
  std::lock_guard scope(self->signalMutex_);
  GstWebRTCICEGatheringState state{};
  g_object_get(webrtc, "ice-gathering-state", &state, nullptr);
  if (state != GST_WEBRTC_ICE_GATHERING_STATE_COMPLETE) return;
  std::lock_guard lock(self->waitMutex_);
  self->gatheringComplete_ = true;
  self->waitCv_.notify_all();
}

void ViewerSession::onBye(GstElement*, guint, guint ssrc, gpointer data) {
  auto* self = fromGst(data);
  std::lock_guard scope(self->signalMutex_);
  self->end("the viewer said goodbye (RTCP BYE, ssrc " + std::to_string(ssrc) + ")");
}

// rtpsession times out its own sources too: the SSRC it made up for its first receiver report, once the
// sender's SSRC took over, is marked BYE and then removed with "on-timeout" (GStreamer 1.22 session_cleanup;
// seen 10-16 s into a Firefox session whose retransmission SSRC had just stopped, where it ended a viewer
// that was still reporting). Only an SSRC the viewer's reports came from ends the session; a viewer whose
// reports all stop is found by goneReason() as well.
void ViewerSession::onTimeout(GstElement*, guint, guint ssrc, gpointer data) {
  auto* self = fromGst(data);
  std::lock_guard scope(self->signalMutex_);
  bool viewers = false;
  {
    std::lock_guard lock(self->callbackMutex_);
    viewers = std::find(self->viewerSsrcs_.begin(), self->viewerSsrcs_.end(), ssrc) != self->viewerSsrcs_.end();
  }
  if (!viewers) {
    log::debug("stream: viewer ", self->id_.substr(0, 8), ": RTP source ", ssrc, " timed out; not the viewer's");
    return;
  }
  self->end("the viewer's RTCP stopped (ssrc " + std::to_string(ssrc) + " timed out)");
}

std::vector<std::uint32_t> ViewerSession::viewerSsrcs() const {
  std::lock_guard lock(callbackMutex_);
  return {viewerSsrcs_.begin(), viewerSsrcs_.end()};
}

void ViewerSession::onSsrcActive(GstElement*, guint, guint ssrc, gpointer data) {
  auto* self = fromGst(data);
  if (ssrc == self->ssrc_) return;  // our own sender report
  // Under the callback lock like the other callbacks: the destructor takes it before it stops the
  // pipeline, which orders this RTP-thread callback before the session is freed (GStreamer's own
  // task joins use GLib's futex locks, which ThreadSanitizer cannot see).
  std::lock_guard lock(self->callbackMutex_);
  if (!self->alive_) return;
  if (std::find(self->viewerSsrcs_.begin(), self->viewerSsrcs_.end(), ssrc) == self->viewerSsrcs_.end() &&
      self->viewerSsrcs_.size() < kMaxViewerSsrcs)
    self->viewerSsrcs_.push_back(ssrc);
  const std::int64_t now = monotonicNs();
  const std::int64_t previous = self->lastRtcpNs_.exchange(now);
  if (previous != 0 && now - previous > self->longestRtcpGapNs_.load())
    self->longestRtcpGapNs_.store(now - previous);  // one writer: this session's RTP thread
}

// Called for each new SSRC in rtpbin's session 0 (with BUNDLE, this viewer's only session). The first call
// takes a reference to that internal session and connects onReceivingRtcp to it, so every RTCP compound
// packet the viewer sends is read.
void ViewerSession::onNewSsrc(GstElement* rtpbin, guint session, guint, gpointer data) {
  auto* self = fromGst(data);
  if (session != 0) return;
  std::lock_guard lock(self->callbackMutex_);
  if (!self->alive_ || self->rtcpSession_) return;
  GObject* internal = nullptr;
  g_signal_emit_by_name(rtpbin, "get-internal-session", 0u, &internal);
  if (!internal) return;
  self->rtcpSession_ = internal;  // the reference the signal gave
  g_signal_connect(internal, "on-receiving-rtcp", G_CALLBACK(onReceivingRtcp), self);
}

void ViewerSession::onReceivingRtcp(GObject*, GstBuffer* buffer, gpointer data) {
  auto* self = fromGst(data);
  GstMapInfo map;
  if (!buffer || !gst_buffer_map(buffer, &map, GST_MAP_READ)) return;
  const std::vector<RtcpReportBlock> blocks = rtcpReportBlocks(map.data, map.size);
  gst_buffer_unmap(buffer, &map);
  std::lock_guard lock(self->callbackMutex_);  // orders this RTCP-thread call before the destructor
  if (!self->alive_) return;
  for (const RtcpReportBlock& b : blocks) {
    if (b.source != self->ssrc_) continue;  // the RTX SSRC's block, or about someone else
    std::lock_guard reportLock(self->reportMutex_);
    if (!self->mediaReport_ || b.extHighestSeq >= self->mediaReport_->extHighestSeq) self->mediaReport_ = b;
  }
}

GstPadProbeReturn ViewerSession::onUpstreamEvent(GstPad*, GstPadProbeInfo* info, gpointer data) {
  GstEvent* event = GST_PAD_PROBE_INFO_EVENT(info);
  if (event && GST_EVENT_TYPE(event) == GST_EVENT_CUSTOM_UPSTREAM &&
      gst_event_has_name(event, "GstForceKeyUnit")) {
    // The viewer's RTCP PLI/FIR: at most one forced keyframe a second from each viewer (the encode is shared).
    auto* self = fromGst(data);
    // One inside the gap is deferred: push() forces it once the gap has passed, unless a keyframe
    // reached the viewer meanwhile.
    if (self->keyframeLimit_.allow(monotonicNs())) {
      self->requestKeyframe();
    } else {
      self->keyframeDeferred_.store(true);
      if (self->keyframeLimit_.refused() % 100 == 1) {
        log::debug("stream: viewer ", self->id_.substr(0, 8), ": ", self->keyframeLimit_.refused(),
                   " keyframe requests (PLI/FIR) held back so far: more than one a second");
      }
    }
  }
  return GST_PAD_PROBE_OK;
}

std::optional<ViewerSession::TransportFeedback> ViewerSession::transportFeedback() const {
  if (!rtpbin_) return std::nullopt;
  // rtpbin's RTP session id 0: with BUNDLE this viewer's streams share that one RTP session, whose
  // rtpsession element carries the transport-cc statistics ("twcc-stats").
  GstElement* rawSession = nullptr;
  g_signal_emit_by_name(rtpbin_.get(), "get-session", 0u, &rawSession);
  GstPtr<GstElement> session(rawSession);
  if (!session || !g_object_class_find_property(G_OBJECT_GET_CLASS(session.get()), "twcc-stats")) return std::nullopt;
  GstStructure* raw = nullptr;
  g_object_get(session.get(), "twcc-stats", &raw, nullptr);
  std::unique_ptr<GstStructure, decltype(&gst_structure_free)> stats(raw, gst_structure_free);
  TransportFeedback f;
  if (!stats || !gst_structure_get_uint(stats.get(), "packets-sent", &f.packetsSent) ||
      !gst_structure_get_uint(stats.get(), "packets-recv", &f.packetsReceived) || f.packetsSent == 0) {
    return std::nullopt;
  }
  gst_structure_get_double(stats.get(), "packet-loss-pct", &f.lossPercent);
  return f;
}

ViewerSession::FeedbackReading ViewerSession::readFeedback() const {
  FeedbackReading r;
  {
    std::lock_guard lock(rtxMutex_);
    r.nackRequests = rtx_.allowed() + rtx_.refused();
  }
  if (!rtpbin_) return r;
  GstElement* rawSession = nullptr;
  g_signal_emit_by_name(rtpbin_.get(), "get-session", 0u, &rawSession);
  GstPtr<GstElement> session(rawSession);
  if (!session) return r;
  using StructurePtr = std::unique_ptr<GstStructure, decltype(&gst_structure_free)>;
  if (g_object_class_find_property(G_OBJECT_GET_CLASS(session.get()), "twcc-stats")) {
    GstStructure* raw = nullptr;
    g_object_get(session.get(), "twcc-stats", &raw, nullptr);
    StructurePtr twcc(raw, gst_structure_free);
    FeedbackReading::TransportWindow w;
    if (twcc && gst_structure_get_uint(twcc.get(), "packets-sent", &w.packetsSent) &&
        gst_structure_get_uint(twcc.get(), "packets-recv", &w.packetsReceived) && w.packetsSent > 0) {
      gst_structure_get_double(twcc.get(), "packet-loss-pct", &w.lossPercent);
      guint sent = 0, received = 0;  // bits/s (rtptwcc.c)
      if (gst_structure_get_uint(twcc.get(), "bitrate-sent", &sent)) w.sentKbps = sent / 1000.0;
      if (gst_structure_get_uint(twcc.get(), "bitrate-recv", &received)) w.receivedKbps = received / 1000.0;
      gint64 dod = 0;
      if (gst_structure_get_int64(twcc.get(), "avg-delta-of-delta", &dod)) w.avgDeltaOfDeltaMs = dod / 1e6;
      r.transport = w;
    }
  }
  // "stats" -> "source-stats": one structure per source (rtpsource.c): ours (internal, our SSRC) counts
  // what we sent; the viewer's holds the last report block it sent (rb-* fields, rb-ssrc = ours,
  // rb-round-trip in 1/65536 s).
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
    guint ssrc = 0, rbSsrc = 0;
    gboolean internal = FALSE, haveRb = FALSE;
    if (!s || !gst_structure_get_uint(s, "ssrc", &ssrc) || !gst_structure_get_boolean(s, "internal", &internal)) continue;
    guint64 octets = 0;
    if (internal && ssrc == ssrc_ && gst_structure_get_uint64(s, "octets-sent", &octets)) r.octetsSent = octets;
    // The viewer's report block about our stream is kept on the viewer's source (the RTCP sender).
    guint fraction = 0, roundTrip = 0, highest = 0;
    if (!internal && gst_structure_get_boolean(s, "have-rb", &haveRb) && haveRb &&
        gst_structure_get_uint(s, "rb-ssrc", &rbSsrc) && rbSsrc == ssrc_ &&
        gst_structure_get_uint(s, "rb-fractionlost", &fraction) &&
        gst_structure_get_uint(s, "rb-exthighestseq", &highest) && (!r.report || highest > r.report->highestSeq)) {
      gst_structure_get_uint(s, "rb-round-trip", &roundTrip);
      r.report = FeedbackReading::ReceiverReport{fraction / 256.0, roundTrip * 1000.0 / 65536.0, highest};
    }
  }
  G_GNUC_END_IGNORE_DEPRECATIONS
  // rtpsession's stats keep the viewer's last block about any of our sources: when that was the RTX
  // SSRC's, the media block read from the packet itself (without an RTT: LSR/DLSR are rtpsession's to turn).
  std::lock_guard lock(reportMutex_);
  if (mediaReport_ && (!r.report || mediaReport_->extHighestSeq > r.report->highestSeq))
    r.report = FeedbackReading::ReceiverReport{mediaReport_->fractionLost, 0, mediaReport_->extHighestSeq};
  return r;
}

std::optional<RtcpReportBlock> ViewerSession::lastMediaReport() const {
  std::lock_guard lock(reportMutex_);
  return mediaReport_;
}

GstElement* ViewerSession::onRequestAuxSender(GstElement*, GObject*, gpointer data) {
  GstElement* budget = gst_element_factory_make("identity", nullptr);
  if (!budget) return nullptr;  // coreelements is always there; without it NACKs are served unbounded
  GstPtr<GstPad> sink(gst_element_get_static_pad(budget, "sink"));
  GstPtr<GstPad> src(gst_element_get_static_pad(budget, "src"));
  gst_pad_add_probe(sink.get(), static_cast<GstPadProbeType>(GST_PAD_PROBE_TYPE_BUFFER | GST_PAD_PROBE_TYPE_BUFFER_LIST),
                    onSentRtp, data, nullptr);
  gst_pad_add_probe(src.get(), GST_PAD_PROBE_TYPE_EVENT_UPSTREAM, onRetransmissionRequest, data, nullptr);
  return budget;  // floating: webrtcbin sinks it
}

GstPadProbeReturn ViewerSession::onSentRtp(GstPad*, GstPadProbeInfo* info, gpointer data) {
  auto* self = fromGst(data);
  const std::int64_t now = monotonicNs();
  auto note = [&](GstBuffer* buffer) {
    GstRTPBuffer rtp = GST_RTP_BUFFER_INIT;
    if (!gst_rtp_buffer_map(buffer, GST_MAP_READ, &rtp)) return;
    // Our media SSRC only: rtprtxsend's own retransmissions (its RTX SSRC) pass here too.
    // rtph264pay leaves DELTA_UNIT off the first packet of a keyframe and sets it on every other one
    // (our appsrc flags delta units); rtpvp8pay sets no such flag, so VP8's payload header is read.
    if (gst_rtp_buffer_get_ssrc(&rtp) == self->ssrc_) {
      const bool keyframeStart =
          self->choice_.codec == PixelFormat::kH264
              ? !GST_BUFFER_FLAG_IS_SET(buffer, GST_BUFFER_FLAG_DELTA_UNIT)
              : isVp8KeyframeStart(static_cast<const std::uint8_t*>(gst_rtp_buffer_get_payload(&rtp)),
                                   gst_rtp_buffer_get_payload_len(&rtp));
      self->rtx_.onSent(gst_rtp_buffer_get_seq(&rtp), gst_buffer_get_size(buffer), now, keyframeStart);
    }
    gst_rtp_buffer_unmap(&rtp);
  };
  std::lock_guard lock(self->rtxMutex_);
  if (GST_PAD_PROBE_INFO_TYPE(info) & GST_PAD_PROBE_TYPE_BUFFER_LIST) {
    GstBufferList* list = GST_PAD_PROBE_INFO_BUFFER_LIST(info);
    for (guint i = 0; i < gst_buffer_list_length(list); ++i) note(gst_buffer_list_get(list, i));
  } else if (GstBuffer* buffer = GST_PAD_PROBE_INFO_BUFFER(info)) {
    note(buffer);
  }
  return GST_PAD_PROBE_OK;
}

GstPadProbeReturn ViewerSession::onRetransmissionRequest(GstPad*, GstPadProbeInfo* info, gpointer data) {
  GstEvent* event = GST_PAD_PROBE_INFO_EVENT(info);
  if (!event || GST_EVENT_TYPE(event) != GST_EVENT_CUSTOM_UPSTREAM ||
      !gst_event_has_name(event, "GstRTPRetransmissionRequest")) {
    return GST_PAD_PROBE_OK;
  }
  auto* self = fromGst(data);
  guint seq = 0, ssrc = 0;
  const GstStructure* s = gst_event_get_structure(event);
  if (!gst_structure_get_uint(s, "seqnum", &seq) || !gst_structure_get_uint(s, "ssrc", &ssrc) || ssrc != self->ssrc_) {
    return GST_PAD_PROBE_OK;  // not about our stream: rtprtxsend ignores it as before
  }
  std::lock_guard lock(self->rtxMutex_);
  return self->rtx_.allow(static_cast<std::uint16_t>(seq), monotonicNs()) ? GST_PAD_PROBE_OK : GST_PAD_PROBE_DROP;
}

void ViewerSession::setRetransmissionPath(std::uint32_t estimateKbps, double rttMs) {
  std::lock_guard lock(rtxMutex_);
  rtx_.setPath(estimateKbps, rttMs);
}

bool ViewerSession::setPlayoutDelay(PlayoutDelay delay) {
  return playoutDelayExt_ && setPlayoutDelayExtension(playoutDelayExt_.get(), delay);
}

ViewerSession::Retransmissions ViewerSession::retransmissions() const {
  std::lock_guard lock(rtxMutex_);
  return {rtx_.allowed(), rtx_.refused(), rtx_.allowedBytes(), rtx_.keyframes()};
}

GstPadProbeReturn ViewerSession::onFirstPacket(GstPad*, GstPadProbeInfo*, gpointer data) {
  auto* self = fromGst(data);
  // Under the callback lock, as onSsrcActive: it orders this streaming-thread call before the destructor.
  std::lock_guard lock(self->callbackMutex_);
  std::int64_t never = 0;
  if (self->alive_) self->firstPacketNs_.compare_exchange_strong(never, monotonicNs());
  return GST_PAD_PROBE_REMOVE;
}

void ViewerSession::recalculateLatency() {
  if (pipeline_) gst_bin_recalculate_latency(GST_BIN(pipeline_.get()));
}

GstBusSyncReply ViewerSession::onBusMessage(GstBus*, GstMessage* message, gpointer data) {
  if (GST_MESSAGE_TYPE(message) == GST_MESSAGE_LATENCY) {
    // webrtcbin adds its RTP session and transport after the pipeline reached PLAYING; they need the
    // pipeline latency redistributed (not on a streaming thread, so on the owner's loop).
    // The task holds its own reference on the pipeline, not on the session: this message can come
    // while make_shared is still finishing the session, when reading weak_from_this() is a data race
    // (found by TSan). After the session is gone the pipeline is in NULL and recalculating is harmless.
    auto* self = fromGst(data);
    std::lock_guard lock(self->callbackMutex_);
    if (self->alive_ && self->events_.post) {
      std::shared_ptr<GstElement> pipeline(GST_ELEMENT(gst_object_ref(self->pipeline_.get())), gst_object_unref);
      self->events_.post([pipeline] { gst_bin_recalculate_latency(GST_BIN(pipeline.get())); });
    }
    gst_message_unref(message);  // a sync handler that returns DROP owns the message
    return GST_BUS_DROP;
  }
  if (GST_MESSAGE_TYPE(message) == GST_MESSAGE_ERROR) {
    GError* raw = nullptr;
    gchar* debug = nullptr;
    gst_message_parse_error(message, &raw, &debug);
    GErrorPtr err(raw);
    GCharPtr dbg(debug);
    auto* self = fromGst(data);
    const std::string what = std::string("pipeline error from ") + GST_OBJECT_NAME(GST_MESSAGE_SRC(message)) +
                             ": " + (err ? err->message : "unknown");
    log::warn("stream: viewer ", self->id_.substr(0, 8), ": ", what);
    self->end(what);
  }
  gst_message_unref(message);  // nobody else reads this bus
  return GST_BUS_DROP;
}

}  // namespace zerohop::stream
