#pragma once
// One WebRTC peer we send to (a WHEP viewer, a WHIP endpoint, a program's WebRtcSession): its own
// GStreamer pipeline appsrc -> payloader -> webrtcbin, put together from pieces with one job each:
//   send_graph.hpp          builds the graph (one payloader strategy per codec: track_payloader.hpp)
//   webrtc_negotiation.hpp  the SDP exchange in either role, waiting on one condition
//   viewer_liveness.hpp     whether the viewer is still there (disconnection, RTCP silence)
//   viewer_feedback.hpp     its RTCP feedback as congestion control reads it (rtp_session_feedback.hpp
//                           reads rtpsession's side)
//   viewer_keyframe_requests.hpp  its PLI/FIR, limited, towards the shared encode
// This class wires them to webrtcbin's signals and probes and holds the session's life.
//
// One pipeline per viewer (not a tee): a viewer that stalls or fails is torn down alone, and each
// viewer's gating (nothing until a keyframe) and queue are its own. The encoded bytes are not copied:
// every viewer's GstBuffer wraps the same immutable EncodedUnit.
//
// A viewer whose offer asks for sound alone (VideoChoice::hasVideo() false) gets the Opus track only: no
// video feed, no keyframe requests, its reports read about the sound's SSRC.
// Life: negotiate() (on the HTTP thread) -> connected (webrtcbin's connection-state) -> push()
// delivers units -> the session reports its end (peer closed, ICE failed, RTCP BYE, the timeout of an
// SSRC the viewer reported from, pipeline error) through Events::onEnded; its owner then destroys it
// off GStreamer's threads. A viewer that vanishes without a word is found by the owner's periodic
// goneReason() (viewer_liveness.hpp).
// Overflow policy: if more than kMaxQueuedUnits wait in the appsrc (the viewer's pipeline is stuck),
// new units are dropped until the next keyframe, and a keyframe is requested.
// The viewer's keyframe requests (RTCP PLI/FIR) force at most one keyframe a second on the shared encode
// (keyframe_request_limit.hpp); its offer's sections other than the chosen video are answered rejected
// and never reach webrtcbin (sdp_sections.hpp). What it sends reaches the SRTP decoder only as RTCP from
// its first few sender SSRCs; the rest is dropped and counted (ssrc_gate.hpp).
// Thread-safety: thread-safe. Owned by StreamServer::Impl through shared_ptr; the destructor must not
// run on one of this session's own GStreamer threads.

#include <gst/gst.h>
#include <gst/rtp/gstrtphdrext.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "stream/gst_handles.hpp"
#include "stream/retransmission_budget.hpp"
#include "stream/rtcp_report_blocks.hpp"
#include "stream/rtp_appsrc_feed.hpp"
#include "stream/rtp_extension_payloads.hpp"
#include "stream/send_graph.hpp"
#include "stream/ssrc_gate.hpp"
#include "stream/video_offer.hpp"
#include "stream/viewer_feedback.hpp"
#include "stream/viewer_liveness.hpp"
#include "zerohop/encoded_unit.hpp"

namespace zerohop::stream {

class ViewerKeyframeRequests;
class WebrtcNegotiation;

class ViewerSession : public std::enable_shared_from_this<ViewerSession> {
 public:
  struct Events {
    std::function<void()> onConnected;                       ///< the viewer can receive media now
    std::function<void()> onKeyframeRequest;                 ///< PLI/FIR from the viewer, or it fell behind
    std::function<void(const std::string& reason)> onEnded;  ///< called at most once
    std::function<void(std::function<void()>)> post;         ///< runs a task later on the owner's loop thread
    /// Simulcast (VideoChoice::simulcastRids): the peer's PLI/FIR about layer N's SSRC (N = 0 too), or
    /// layer N >= 1's queue overflowed (layer 0's as onKeyframeRequest). Called on a GStreamer thread.
    std::function<void(std::size_t layer)> onLayerKeyframeRequest;
  };

  using SendOptions = stream::SendOptions;

  static constexpr unsigned kMaxQueuedUnits = 8;
  /// Opus packets that may wait in the audio appsrc before new ones are dropped: 500 ms of 10 ms
  /// packets, a second of 20 ms ones.
  static constexpr unsigned kMaxQueuedAudioUnits = 50;
  /// The liveness bounds (viewer_liveness.hpp).
  static constexpr std::chrono::seconds kDisconnectGrace = ViewerLiveness::kDisconnectGrace;
  static constexpr std::chrono::seconds kRtcpSilence = ViewerLiveness::kRtcpSilence;
  static constexpr std::chrono::seconds kRtcpSilenceMax = ViewerLiveness::kRtcpSilenceMax;
  static constexpr std::size_t kMaxViewerSsrcs = ViewerLiveness::kMaxViewerSsrcs;

  /// Builds the pipeline and brings it to PLAYING. `loopbackIce`: gather ICE candidates on
  /// 127.0.0.1 only (the HTTP front listens on a loopback address, so the viewer is on this host).
  /// `ice`: STUN/TURN servers and the UDP port range (none by default). `send`: the RTP header
  /// extensions' settings.
  /// Throws Error(kUnavailable) when an element is missing or the pipeline does not start,
  /// Error(kInvalidArgument) when webrtcbin refuses a TURN server.
  ViewerSession(std::string id, VideoChoice choice, bool loopbackIce, Events events, const SessionIce& ice = {},
                SendOptions send = {});
  ~ViewerSession();
  ViewerSession(const ViewerSession&) = delete;
  ViewerSession& operator=(const ViewerSession&) = delete;

  /// Applies the offer, creates the sendonly answer, waits for ICE gathering to complete and
  /// returns the answer SDP with its candidates. Throws Error: kInvalidArgument when webrtcbin
  /// rejects the offer, kTimeout when a step exceeds `timeout`, kUnavailable when aborted.
  std::string negotiate(const std::string& offerSdp, std::chrono::milliseconds timeout);

  /// The other direction (WHIP publishing, src/stream/whip_publisher.cpp): we offer. Creates the
  /// sendonly offer, waits for ICE gathering and returns it with its candidates; errors as negotiate().
  std::string createOffer(std::chrono::milliseconds timeout);
  /// Applies the remote answer to our offer. Throws Error(kInvalidArgument) when webrtcbin rejects it.
  void applyAnswer(const std::string& answerSdp, std::chrono::milliseconds timeout);

  /// Wakes a negotiate() in progress so it throws kUnavailable (server shutting down).
  void abort();

  /// Non-blocking; drops the unit when not connected yet, while waiting for a keyframe, or when
  /// the viewer's queue is full (then waits for the next keyframe and asks for one).
  void push(const EncodedUnitPtr& unit);
  /// Simulcast: as push(), into layer `layer`'s own feed (0: push()); a layer the session lacks is ignored.
  void pushLayer(std::size_t layer, const EncodedUnitPtr& unit);
  /// Simulcast layers of the video (1 without simulcast).
  std::size_t layers() const { return graph_->layers(); }

  /// Non-blocking: one Opus packet (WhepStream::publishAudio) for the audio track; ignored when the
  /// viewer's offer had no audio (hasAudio() false) or it is not connected yet; dropped while
  /// kMaxQueuedAudioUnits wait (counted in audioDropped()).
  void pushAudio(const EncodedUnitPtr& unit);
  /// The viewer receives the Opus track (its offer had audio and the stream has sound).
  bool hasAudio() const { return choice_.audio.has_value(); }
  std::uint64_t audioDropped() const { return audioDropped_.load(std::memory_order_relaxed); }

  const std::string& id() const { return id_; }
  /// What this viewer receives (VideoChoice::codec): kH264 or kVP8, push() takes units of it only; kOpus
  /// for a viewer of the sound alone (its offer had no video: VideoChoice::hasVideo()), push() takes none.
  Codec codec() const { return choice_.codec; }
  /// The choice made from its offer (codec, payload type, the offered and the stream's H.264 level).
  const VideoChoice& choice() const { return choice_; }
  bool connected() const { return connected_.load(); }
  /// CLOCK_MONOTONIC ns when the session was created (for a WHEP viewer: when its POST was taken).
  std::int64_t createdNs() const { return createdNs_; }
  /// CLOCK_MONOTONIC ns when the peer connection first became connected; 0 = not yet.
  std::int64_t connectedNs() const { return liveness_.connectedNs(); }
  /// CLOCK_MONOTONIC ns when the first RTP packet left the payloader (the first packet of the keyframe
  /// the viewer starts on: nothing goes to it before one); 0 = not yet.
  std::int64_t firstPacketNs() const { return firstPacketNs_.load(); }
  /// The viewer's transport-wide congestion control feedback as GStreamer's RTP session sums it up (its
  /// "twcc-stats", over the last feedback window); nullopt before any came (or without the extension).
  struct TransportFeedback {
    unsigned packetsSent = 0;      ///< our packets the window covers
    unsigned packetsReceived = 0;  ///< of those, the ones the viewer reported received
    double lossPercent = 0;
  };
  std::optional<TransportFeedback> transportFeedback() const;
  /// Everything congestion control reads about this viewer, read now from webrtcbin's RTP session:
  /// the last receiver report about our stream, the last transport-cc window, what we have sent.
  using FeedbackReading = stream::FeedbackReading;
  FeedbackReading readFeedback() const;
  /// The viewer's latest RTCP report block about our media SSRC, read from its compound packets (every
  /// block, whatever its place: rtcp_report_blocks.hpp); nullopt before one came.
  std::optional<RtcpReportBlock> lastMediaReport() const;
  /// Our media SSRC (the answer's a=ssrc): the video's, or the sound's for a viewer of the sound alone.
  std::uint32_t mediaSsrc() const { return ssrc_; }
  /// The viewer's estimate (kb/s) and RTT (ms) for the retransmission budget (retransmission_budget.hpp).
  void setRetransmissionPath(std::uint32_t estimateKbps, double rttMs);
  struct Retransmissions {
    std::uint64_t resent = 0, refused = 0, resentBytes = 0;  ///< NACKed packets resent / passed over so far
    std::uint64_t keyframes = 0;                              ///< keyframes sent
    std::uint64_t twice = 0;  ///< of the resent, those sent twice (a short round trip)
  };
  Retransmissions retransmissions() const;
  /// The playout delay written from the next packet on (AdaptivePlayoutDelay); false when the viewer's
  /// offer had no playout-delay extension, so nothing is sent. Thread-safe.
  bool setPlayoutDelay(PlayoutDelay delay);
  /// Packets from the viewer dropped before SRTP decryption so far: any RTP (we only send), RTCP from a
  /// sender SSRC past the first SsrcGate::kMaxRtcpSenders (ssrc_gate.hpp).
  std::uint64_t inboundDropped() const { return inboundGate_->dropped(); }
  /// The RTCP sender SSRCs the gate lets through (at most SsrcGate::kMaxRtcpSenders).
  std::vector<std::uint32_t> inboundRtcpSenders() const { return inboundGate_->rtcpSenders(); }
  /// The SSRCs the viewer's RTCP reports came from so far (a browser uses one or two): only the
  /// timeout of one of these ends the session.
  std::vector<std::uint32_t> viewerSsrcs() const;
  /// webrtcbin's RTP bin, for tests that emit its signals (on-timeout) as GStreamer would.
  GstElement* rtpBinForTesting() const { return rtpbin_.get(); }
  /// Why a connected viewer should be considered gone at `nowNs` (CLOCK_MONOTONIC), or "" while it
  /// looks alive: disconnected for longer than kDisconnectGrace, or RTCP silent (viewer_liveness.hpp).
  std::string goneReason(std::int64_t nowNs) const;

 private:
  /// The session behind a GStreamer callback's user data. Callbacks run on GStreamer's threads, often
  /// pooled ones that existed before this session; the acquire pairs with the constructor's release
  /// of published_ so ThreadSanitizer sees the members initialised (GLib's futex locks, which really
  /// order this, are invisible to it; see glib_handoff.hpp).
  static ViewerSession* fromGst(gpointer data);
  void connectSignals();
  static void onConnectionState(GstElement* webrtc, GParamSpec*, gpointer self);
  static void onIceConnectionState(GstElement* webrtc, GParamSpec*, gpointer self);
  static void onIceGatheringState(GstElement* webrtc, GParamSpec*, gpointer self);
  static void onBye(GstElement* rtpbin, guint session, guint ssrc, gpointer self);
  static void onTimeout(GstElement* rtpbin, guint session, guint ssrc, gpointer self);
  static void onSsrcActive(GstElement* rtpbin, guint session, guint ssrc, gpointer self);
  static void onNewSsrc(GstElement* rtpbin, guint session, guint ssrc, gpointer self);
  static void onReceivingRtcp(GObject* session, GstBuffer* buffer, gpointer self);
  static void onFeedbackRtcp(GObject* session, guint type, guint fbtype, guint senderSsrc, guint mediaSsrc,
                             GstBuffer* fci, gpointer self);
  /// Simulcast: the layer whose SSRC `ssrc` is (0: the first, the video's mediaSsrc()), or -1.
  int layerOfSsrc(std::uint32_t ssrc) const;
  static GstPadProbeReturn onFirstPacket(GstPad* pad, GstPadProbeInfo* info, gpointer self);
  static GstElement* onRequestAuxSender(GstElement* webrtc, GObject* transport, gpointer self);
  static GstPadProbeReturn onSentRtp(GstPad* pad, GstPadProbeInfo* info, gpointer self);
  static GstPadProbeReturn onRetransmissionRid(GstPad* pad, GstPadProbeInfo* info, gpointer self);
  static GstPadProbeReturn onRetransmissionRequest(GstPad* pad, GstPadProbeInfo* info, gpointer self);
  static GstBusSyncReply onBusMessage(GstBus* bus, GstMessage* message, gpointer self);

  /// Puts inboundGate_ in front of each transport's SRTP decoder (ssrc_gate_probe.hpp); after the local
  /// description is set (the transports exist then) and before it is handed to the peer.
  void gateInbound();
  void end(const std::string& reason);
  void noteDisconnected(bool disconnected);

  const std::string id_;
  const VideoChoice choice_;
  const std::int64_t createdNs_;
  Events events_;

  std::unique_ptr<SendGraph> graph_;
  std::unique_ptr<WebrtcNegotiation> negotiation_;  // borrows graph_'s webrtcbin
  GstPtr<GstElement> rtpbin_;  // webrtcbin's internal rtpbin (for BYE/timeout)
  guint ssrc_ = 0;  // ours (graph_'s), to tell our own RTCP from the viewer's

  // Guards callbacks against the destructor: a callback runs only while alive_ is true.
  mutable std::mutex callbackMutex_;
  // Held by each of webrtcbin's state-notify callbacks for its whole run (they read members before
  // they know whether to take callbackMutex_); the destructor takes it once the pipeline is stopped.
  // Order: signalMutex_ before callbackMutex_, never the reverse.
  std::mutex signalMutex_;
  bool alive_ = true;
  bool ended_ = false;

  // Which NACKed packets are resent: the probes around webrtcbin's rtprtxsend (send path, RTCP thread)
  // and setRetransmissionPath (the owner's loop) meet here.
  mutable std::mutex rtxMutex_;
  RetransmissionBudget rtx_;
  // rtpbin's internal session 0, whose on-receiving-rtcp feeds reports_: taken (with a reference, dropped
  // in the destructor after disconnecting) when that session sees its first SSRC (onNewSsrc); null before.
  GObject* rtcpSession_ = nullptr;
  std::unique_ptr<MediaReportTracker> reports_;  // every report block the viewer sends (RTCP thread)
  // The viewer's PLI/FIR and "fell behind": shared with the appsrc's upstream-event probe, which may run
  // on a pooled streaming thread until the pipeline stops, so the probe never reads the session itself.
  std::shared_ptr<ViewerKeyframeRequests> keyframes_;

  std::unique_ptr<AppsrcFeed> feed_;  // nothing until a keyframe, overflow policy (rtp_appsrc_feed.hpp)
  std::unique_ptr<AppsrcFeed> audioFeed_;  // the Opus track's, null without audio
  std::vector<std::unique_ptr<AppsrcFeed>> layerFeeds_;  // simulcast layers 1.., empty without
  std::atomic<std::uint64_t> audioDropped_{0};
  std::atomic<bool> connected_{false};
  std::atomic<bool> published_{false};
  ViewerLiveness liveness_;
  // What the peer may send into the RTP stack (ssrc_gate.hpp); the nicesrc probes share it.
  const std::shared_ptr<SsrcGate> inboundGate_ = std::make_shared<SsrcGate>();
  std::atomic<std::int64_t> firstPacketNs_{0};
};

}  // namespace zerohop::stream
