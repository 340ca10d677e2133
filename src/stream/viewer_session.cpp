#include "stream/viewer_session.hpp"

#include <gst/rtp/gstrtcpbuffer.h>
#include <gst/rtp/gstrtpbuffer.h>

#include <string>
#include <utility>

#include "stream/glib_handoff.hpp"
#include "stream/rtp_header_extensions.hpp"
#include "stream/rtp_session_feedback.hpp"
#include "stream/simulcast_sdp.hpp"
#include "stream/ssrc_gate_probe.hpp"
#include "stream/viewer_keyframe_requests.hpp"
#include "stream/webrtc_negotiation.hpp"
#include "zerohop/clock.hpp"
#include "zerohop/error.hpp"
#include "zerohop/log.hpp"

namespace zerohop::stream {
namespace {

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

// The appsrc's upstream-event probe: the viewer's RTCP PLI/FIR reach it as GstForceKeyUnit. Its user data
// is the session's ViewerKeyframeRequests (shared), never the session: the probe may run on a pooled
// streaming thread until the pipeline stops, and the request object outlives the probe.
using KeyframeRequestsRef = GlibHandoff<std::shared_ptr<ViewerKeyframeRequests>>;

GstPadProbeReturn onViewerKeyframeRequest(GstPad*, GstPadProbeInfo* info, gpointer data) {
  GstEvent* event = GST_PAD_PROBE_INFO_EVENT(info);
  if (event && GST_EVENT_TYPE(event) == GST_EVENT_CUSTOM_UPSTREAM && gst_event_has_name(event, "GstForceKeyUnit")) {
    static_cast<KeyframeRequestsRef*>(data)->get()->onViewerRequest(monotonicNs());
  }
  return GST_PAD_PROBE_OK;
}

void dropKeyframeRequestsRef(gpointer data) { delete static_cast<KeyframeRequestsRef*>(data); }

}  // namespace

ViewerSession::ViewerSession(std::string id, VideoChoice choice, bool loopbackIce, Events events,
                             const SessionIce& ice, SendOptions send)
    : id_(std::move(id)), choice_(std::move(choice)), createdNs_(monotonicNs()), events_(std::move(events)) {
  graph_ = std::make_unique<SendGraph>("zerohop-viewer-" + id_.substr(0, 8), choice_, loopbackIce, ice, send);
  negotiation_ = std::make_unique<WebrtcNegotiation>(graph_->webrtc(), graph_->pipeline(), id_.substr(0, 8),
                                                     graph_->stunOrTurn());
  // The media SSRC the viewer's reports are read about: the video's, or the sound's for a viewer of
  // the sound alone.
  ssrc_ = choice_.hasVideo() ? graph_->ssrc() : graph_->audioSsrc();
  reports_ = std::make_unique<MediaReportTracker>(ssrc_);
  keyframes_ = std::make_shared<ViewerKeyframeRequests>(id_.substr(0, 8), [this] {
    if (events_.onKeyframeRequest) events_.onKeyframeRequest();
  });
  if (graph_->appsrc())
    feed_ = std::make_unique<AppsrcFeed>(graph_->appsrc(), graph_->pipeline(), kMaxQueuedUnits);
  for (std::size_t layer = 1; layer < graph_->layers(); ++layer)
    layerFeeds_.push_back(
        std::make_unique<AppsrcFeed>(graph_->layerAppsrc(layer), graph_->pipeline(), kMaxQueuedUnits));
  // Every Opus packet is a "keyframe" (it decodes alone): the feed's overflow policy drops while full.
  if (graph_->audioAppsrc())
    audioFeed_ = std::make_unique<AppsrcFeed>(graph_->audioAppsrc(), graph_->pipeline(), kMaxQueuedAudioUnits);
  connectSignals();
  graph_->play();
}

void ViewerSession::connectSignals() {
  GstElement* webrtc = graph_->webrtc();
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
  if (graph_->appsrc()) {  // a viewer of the sound alone asks for no keyframes
    GstPtr<GstPad> appsrcPad(gst_element_get_static_pad(graph_->appsrc(), "src"));
    gst_pad_add_probe(appsrcPad.get(), GST_PAD_PROBE_TYPE_EVENT_UPSTREAM, onViewerKeyframeRequest,
                      new KeyframeRequestsRef(keyframes_), dropKeyframeRequestsRef);
  }
  gst_pad_add_probe(graph_->payloaderSrc(),
                    static_cast<GstPadProbeType>(GST_PAD_PROBE_TYPE_BUFFER | GST_PAD_PROBE_TYPE_BUFFER_LIST),
                    onFirstPacket, this, nullptr);
  GstPtr<GstBus> bus(gst_element_get_bus(graph_->pipeline()));
  gst_bus_set_sync_handler(bus.get(), onBusMessage, this, nullptr);
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
  keyframes_->close();
  abort();
  g_signal_handlers_disconnect_by_data(graph_->webrtc(), this);
  if (rtpbin_) g_signal_handlers_disconnect_by_data(rtpbin_.get(), this);
  graph_->stop();
  // The streaming threads are stopped now, through GLib's futex locks, which ThreadSanitizer cannot
  // see: taking the callback lock again orders the last callback that still ran before the stop
  // (it found alive_ false) before this object is freed.
  { std::lock_guard lock(callbackMutex_); }
  { std::lock_guard lock(signalMutex_); }  // the state-notify callbacks (found by TSan: a log line read id_)
  { std::lock_guard lock(rtxMutex_); }  // the same for the retransmission probes
  // The same for the keyframe probe: it took this lock in its last call, so that call is ordered before
  // the probe's data (and, if last, the requests object) is freed with the pipeline below.
  keyframes_->close();
  if (GObject* session = std::exchange(rtcpSession_, nullptr)) {
    g_signal_handlers_disconnect_by_data(session, this);
    g_object_unref(session);
  }
  GstPtr<GstBus> bus(gst_element_get_bus(graph_->pipeline()));
  gst_bus_set_sync_handler(bus.get(), nullptr, nullptr, nullptr);
  rtpbin_.reset();
  graph_.reset();
}

void ViewerSession::abort() { negotiation_->abort(); }

std::string ViewerSession::negotiate(const std::string& offerSdp, std::chrono::milliseconds timeout) {
  const int audioIndex = choice_.audio ? choice_.audio->mediaIndex : -1;
  // The sections webrtcbin sees: the video's and the sound's, or the sound's alone.
  std::string answer = choice_.hasVideo()
                           ? negotiation_->answer(offerSdp, choice_.mediaIndex, timeout, audioIndex)
                           : negotiation_->answer(offerSdp, audioIndex, timeout);
  gateInbound();  // the transports exist now; the peer cannot send before it has this answer
  return answer;
}

std::string ViewerSession::createOffer(std::chrono::milliseconds timeout) {
  std::string offer = negotiation_->offer(timeout);
  gateInbound();  // the transports exist now; the peer cannot send before it has this offer
  if (graph_->layers() > 1) {
    // webrtcbin 1.22's transceiver has no mid until the answer is applied: the offer's video section names
    // it.
    const std::string mid = firstVideoMid(offer);
    if (mid.empty()) {
      log::warn("stream: ", id_.substr(0, 8),
                ": the offer's video section has no a=mid; the simulcast layers' "
                "packets carry none (an endpoint may not tell them apart)");
    }
    graph_->writeMid(mid);
  }
  return offer;
}

void ViewerSession::gateInbound() {
  if (attachSsrcGate(graph_->webrtc(), inboundGate_) == 0) {
    log::warn("stream: viewer ", id_.substr(0, 8), ": no nicesrc found in webrtcbin to filter what the peer sends; "
              "junk with fresh SSRCs reaches the SRTP decoder unbounded (a GStreamer other than 1.22?)");
  }
}

void ViewerSession::applyAnswer(const std::string& answerSdp, std::chrono::milliseconds timeout) {
  negotiation_->applyAnswer(answerSdp, timeout);
}

void ViewerSession::push(const EncodedUnitPtr& unit) {
  if (!feed_ || !connected_.load() || !unit || unit->bytes.empty() || unit->codec != choice_.codec) return;
  keyframes_->onUnit(unit->keyframe, monotonicNs());  // serves a deferred PLI/FIR once the limit allows
  if (feed_->push(unit)) {
    log::debug("stream: viewer ", id_.substr(0, 8), " fell behind; dropping until the next keyframe");
    keyframes_->onFellBehind();
  }
}

void ViewerSession::pushLayer(std::size_t layer, const EncodedUnitPtr& unit) {
  if (layer == 0) return push(unit);
  if (layer > layerFeeds_.size() || !connected_.load() || !unit || unit->bytes.empty() ||
      unit->codec != choice_.codec)
    return;
  if (layerFeeds_[layer - 1]->push(unit)) {
    log::debug("stream: ", id_.substr(0, 8), " simulcast layer ", layer,
               " fell behind; dropping until its next keyframe");
    if (events_.onLayerKeyframeRequest) events_.onLayerKeyframeRequest(layer);
  }
}

int ViewerSession::layerOfSsrc(std::uint32_t ssrc) const {
  for (std::size_t layer = 0; layer < graph_->layers(); ++layer) {
    if (graph_->layerSsrc(layer) == ssrc) return static_cast<int>(layer);
  }
  return -1;
}

void ViewerSession::pushAudio(const EncodedUnitPtr& unit) {
  if (!audioFeed_ || !connected_.load() || !unit || unit->bytes.empty()) return;
  if (audioFeed_->push(unit)) audioDropped_.fetch_add(1, std::memory_order_relaxed);
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
    if (self->feed_) self->feed_->waitForKeyframe();
    for (const auto& feed : self->layerFeeds_) feed->waitForKeyframe();
    std::lock_guard lock(self->callbackMutex_);
    if (!self->alive_ || self->ended_) return;
    self->liveness_.noteConnected(monotonicNs());
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
  if (liveness_.noteDisconnected(disconnected, monotonicNs()))
    log::debug("stream: viewer ", id_.substr(0, 8), " disconnected; ending it unless it is back within ",
               kDisconnectGrace.count(), " s");
}

std::string ViewerSession::goneReason(std::int64_t nowNs) const { return liveness_.goneReason(nowNs); }

void ViewerSession::onIceGatheringState(GstElement* webrtc, GParamSpec*, gpointer data) {
  auto* self = fromGst(data);
  std::lock_guard scope(self->signalMutex_);
  GstWebRTCICEGatheringState state{};
  g_object_get(webrtc, "ice-gathering-state", &state, nullptr);
  if (state == GST_WEBRTC_ICE_GATHERING_STATE_COMPLETE) self->negotiation_->noteGatheringComplete();
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
  if (!self->liveness_.isViewerSsrc(ssrc)) {
    log::debug("stream: viewer ", self->id_.substr(0, 8), ": RTP source ", ssrc, " timed out; not the viewer's");
    return;
  }
  self->end("the viewer's RTCP stopped (ssrc " + std::to_string(ssrc) + " timed out)");
}

std::vector<std::uint32_t> ViewerSession::viewerSsrcs() const { return liveness_.viewerSsrcs(); }

void ViewerSession::onSsrcActive(GstElement*, guint, guint ssrc, gpointer data) {
  auto* self = fromGst(data);
  if (ssrc == self->ssrc_ || ssrc == self->graph_->audioSsrc() || self->layerOfSsrc(ssrc) >= 0)
    return;  // our own sender reports
  // Under the callback lock like the other callbacks: the destructor takes it before it stops the
  // pipeline, which orders this RTP-thread callback before the session is freed (GStreamer's own
  // task joins use GLib's futex locks, which ThreadSanitizer cannot see).
  std::lock_guard lock(self->callbackMutex_);
  if (!self->alive_) return;
  self->liveness_.noteReport(ssrc, monotonicNs());
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
  // Simulcast: a PLI/FIR about a layer never reaches that layer's appsrc with BUNDLE (webrtcbin 1.22's
  // rtpfunnel drops a GstForceKeyUnit for an SSRC its caps do not name, and the layers' funnel in front
  // of it names none; fixed in 1.26), so the session's feedback is read here and mapped to the layer by
  // its SSRC.
  if (self->graph_->layers() > 1)
    g_signal_connect(internal, "on-feedback-rtcp", G_CALLBACK(onFeedbackRtcp), self);
}

void ViewerSession::onFeedbackRtcp(GObject*, guint type, guint fbtype, guint, guint mediaSsrc, GstBuffer* fci,
                                   gpointer data) {
  auto* self = fromGst(data);
  if (type != GST_RTCP_TYPE_PSFB) return;
  std::vector<std::uint32_t> asked;
  if (fbtype == GST_RTCP_PSFB_TYPE_PLI) {
    asked.push_back(mediaSsrc);
  } else if (fbtype == GST_RTCP_PSFB_TYPE_FIR && fci) {
    // RFC 5104 §4.3.1.1: the FCI is one 8-byte entry per SSRC asked (SSRC, sequence number, 3 reserved).
    GstMapInfo map;
    if (gst_buffer_map(fci, &map, GST_MAP_READ)) {
      for (std::size_t i = 0; i + 8 <= map.size && asked.size() < 8; i += 8)
        asked.push_back(GST_READ_UINT32_BE(map.data + i));
      gst_buffer_unmap(fci, &map);
    }
  } else {
    return;
  }
  std::lock_guard lock(self->callbackMutex_);  // orders this RTCP-thread call before the destructor
  if (!self->alive_ || !self->events_.onLayerKeyframeRequest) return;
  for (std::uint32_t ssrc : asked) {
    if (const int layer = self->layerOfSsrc(ssrc); layer >= 0)
      self->events_.onLayerKeyframeRequest(static_cast<std::size_t>(layer));
  }
}

void ViewerSession::onReceivingRtcp(GObject*, GstBuffer* buffer, gpointer data) {
  auto* self = fromGst(data);
  std::lock_guard lock(self->callbackMutex_);  // orders this RTCP-thread call before the destructor
  if (!self->alive_ || !buffer) return;
  GstMapInfo map;
  if (!gst_buffer_map(buffer, &map, GST_MAP_READ)) return;
  self->reports_->onCompoundRtcp(map.data, map.size);
  gst_buffer_unmap(buffer, &map);
}

std::optional<ViewerSession::TransportFeedback> ViewerSession::transportFeedback() const {
  const std::optional<FeedbackReading::TransportWindow> w = readTransportWindow(rtpbin_.get());
  if (!w) return std::nullopt;
  return TransportFeedback{w->packetsSent, w->packetsReceived, w->lossPercent};
}

ViewerSession::FeedbackReading ViewerSession::readFeedback() const {
  FeedbackReading r = readRtpSessionFeedback(rtpbin_.get(), ssrc_);
  {
    std::lock_guard lock(rtxMutex_);
    r.nackRequests = rtx_.allowed() + rtx_.refused();
  }
  // rtpsession's stats keep the viewer's last block about any of our sources: when that was the RTX
  // SSRC's, the media block read from the packet itself.
  reports_->preferNewer(r);
  return r;
}

std::optional<RtcpReportBlock> ViewerSession::lastMediaReport() const { return reports_->latest(); }

GstElement* ViewerSession::onRequestAuxSender(GstElement*, GObject*, gpointer data) {
  GstElement* budget = gst_element_factory_make("identity", nullptr);
  if (!budget) return nullptr;  // coreelements is always there; without it NACKs are served unbounded
  GstPtr<GstPad> sink(gst_element_get_static_pad(budget, "sink"));
  GstPtr<GstPad> src(gst_element_get_static_pad(budget, "src"));
  gst_pad_add_probe(sink.get(), static_cast<GstPadProbeType>(GST_PAD_PROBE_TYPE_BUFFER | GST_PAD_PROBE_TYPE_BUFFER_LIST),
                    onSentRtp, data, nullptr);
  gst_pad_add_probe(src.get(), GST_PAD_PROBE_TYPE_EVENT_UPSTREAM, onRetransmissionRequest, data, nullptr);
  if (fromGst(data)->graph_->layers() > 1) {
    gst_pad_add_probe(
        src.get(), static_cast<GstPadProbeType>(GST_PAD_PROBE_TYPE_BUFFER | GST_PAD_PROBE_TYPE_BUFFER_LIST),
        onRetransmissionRid, data, nullptr);
  }
  return budget;  // floating: webrtcbin sinks it
}

namespace {

// The offset of the one-byte header extension element `id` in an RTP packet's extension, or -1.
int extensionElementAt(GstRTPBuffer& rtp, unsigned id) {
  guint16 bits = 0;
  gpointer raw = nullptr;
  guint words = 0;
  if (!gst_rtp_buffer_get_extension_data(&rtp, &bits, &raw, &words) || bits != 0xBEDE || !raw) return -1;
  const auto* data = static_cast<const std::uint8_t*>(raw);
  const std::size_t size = static_cast<std::size_t>(words) * 4;
  for (std::size_t i = 0; i < size;) {
    const unsigned elementId = data[i] >> 4;
    if (elementId == 0) {  // padding
      ++i;
      continue;
    }
    if (elementId == 15) return -1;
    if (elementId == id) return static_cast<int>(i);
    i += 2 + (data[i] & 0x0F);
  }
  return -1;
}

}  // namespace

// Simulcast: a retransmission carries the rid its original had (rtprtxsend copies the extensions); as
// the repaired-rtp-stream-id it tells the SFU which layer's RTX stream this is. Media packets pass as
// they are; only RTX ones (an SSRC not ours) are made writable and have the element's id rewritten.
GstPadProbeReturn ViewerSession::onRetransmissionRid(GstPad*, GstPadProbeInfo* info, gpointer data) {
  auto* self = fromGst(data);
  const SimulcastExtensionIds& ids = self->graph_->simulcastIds();
  const auto needsRewrite = [&](GstBuffer* buffer) {
    GstRTPBuffer rtp = GST_RTP_BUFFER_INIT;
    if (!gst_rtp_buffer_map(buffer, GST_MAP_READ, &rtp)) return false;
    const std::uint32_t ssrc = gst_rtp_buffer_get_ssrc(&rtp);
    const bool rtx = self->layerOfSsrc(ssrc) < 0 && ssrc != self->graph_->audioSsrc();
    const bool found = rtx && extensionElementAt(rtp, ids.rid) >= 0;
    gst_rtp_buffer_unmap(&rtp);
    return found;
  };
  const auto rewrite = [&](GstBuffer* writable) {
    GstRTPBuffer rtp = GST_RTP_BUFFER_INIT;
    if (!gst_rtp_buffer_map(writable, GST_MAP_READWRITE, &rtp)) return;
    const int at = extensionElementAt(rtp, ids.rid);
    guint16 bits = 0;
    gpointer raw = nullptr;
    guint words = 0;
    if (at >= 0 && gst_rtp_buffer_get_extension_data(&rtp, &bits, &raw, &words)) {
      auto* bytes = static_cast<std::uint8_t*>(raw);
      bytes[at] = static_cast<std::uint8_t>((ids.rrid << 4) | (bytes[at] & 0x0F));
    }
    gst_rtp_buffer_unmap(&rtp);
  };
  if (GST_PAD_PROBE_INFO_TYPE(info) & GST_PAD_PROBE_TYPE_BUFFER_LIST) {
    GstBufferList* list = GST_PAD_PROBE_INFO_BUFFER_LIST(info);
    for (guint i = 0; i < gst_buffer_list_length(list); ++i) {
      if (!needsRewrite(gst_buffer_list_get(list, i))) continue;
      list = gst_buffer_list_make_writable(list);
      GST_PAD_PROBE_INFO_DATA(info) = list;
      rewrite(gst_buffer_list_get_writable(list, i));
    }
  } else if (GstBuffer* buffer = GST_PAD_PROBE_INFO_BUFFER(info); buffer && needsRewrite(buffer)) {
    buffer = gst_buffer_make_writable(buffer);
    GST_PAD_PROBE_INFO_DATA(info) = buffer;
    rewrite(buffer);
  }
  return GST_PAD_PROBE_OK;
}

GstPadProbeReturn ViewerSession::onSentRtp(GstPad*, GstPadProbeInfo* info, gpointer data) {
  auto* self = fromGst(data);
  const std::int64_t now = monotonicNs();
  auto note = [&](GstBuffer* buffer) {
    GstRTPBuffer rtp = GST_RTP_BUFFER_INIT;
    if (!gst_rtp_buffer_map(buffer, GST_MAP_READ, &rtp)) return;
    // Our media SSRC only: rtprtxsend's own retransmissions (its RTX SSRC) pass here too.
    // Where a keyframe starts is the codec's to say (track_payloader.hpp).
    const TrackPayloader* video = self->graph_->payloader();
    if (video && gst_rtp_buffer_get_ssrc(&rtp) == self->ssrc_) {
      const bool keyframeStart =
          video->keyframeStart(buffer, static_cast<const std::uint8_t*>(gst_rtp_buffer_get_payload(&rtp)),
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

GstPadProbeReturn ViewerSession::onRetransmissionRequest(GstPad* pad, GstPadProbeInfo* info, gpointer data) {
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
  std::uint32_t copies = 0;
  {
    std::lock_guard lock(self->rtxMutex_);
    copies = self->rtx_.allow(static_cast<std::uint16_t>(seq), monotonicNs());
  }
  if (copies == 0) return GST_PAD_PROBE_DROP;
  if (copies == 2) {
    // The second copy: the same request again into rtprtxsend (our identity's sink pad pushes it
    // upstream), which queues a second retransmission behind the first.
    if (GstPtr<GstElement> budget{gst_pad_get_parent_element(pad)}) {
      if (GstPtr<GstPad> sink{gst_element_get_static_pad(budget.get(), "sink")})
        gst_pad_push_event(sink.get(), gst_event_copy(event));
    }
  }
  return GST_PAD_PROBE_OK;
}

void ViewerSession::setRetransmissionPath(std::uint32_t estimateKbps, double rttMs) {
  std::lock_guard lock(rtxMutex_);
  rtx_.setPath(estimateKbps, rttMs);
}

bool ViewerSession::setPlayoutDelay(PlayoutDelay delay) {
  GstRTPHeaderExtension* ext = graph_->playoutDelayExtension();
  return ext && setPlayoutDelayExtension(ext, delay);
}

ViewerSession::Retransmissions ViewerSession::retransmissions() const {
  std::lock_guard lock(rtxMutex_);
  return {rtx_.allowed(), rtx_.refused(), rtx_.allowedBytes(), rtx_.keyframes(), rtx_.twice()};
}

GstPadProbeReturn ViewerSession::onFirstPacket(GstPad*, GstPadProbeInfo*, gpointer data) {
  auto* self = fromGst(data);
  // Under the callback lock, as onSsrcActive: it orders this streaming-thread call before the destructor.
  std::lock_guard lock(self->callbackMutex_);
  std::int64_t never = 0;
  if (self->alive_) self->firstPacketNs_.compare_exchange_strong(never, monotonicNs());
  return GST_PAD_PROBE_REMOVE;
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
      std::shared_ptr<GstElement> pipeline(GST_ELEMENT(gst_object_ref(self->graph_->pipeline())), gst_object_unref);
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
