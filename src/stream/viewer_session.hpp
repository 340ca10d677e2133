#pragma once
// One WHEP viewer: its own GStreamer pipeline appsrc -> rtph264pay (or rtpvp8pay) -> webrtcbin.
//
// One pipeline per viewer (not a tee): a viewer that stalls or fails is torn down alone, and each
// viewer's gating (nothing until a keyframe) and queue are its own. The encoded bytes are not copied:
// every viewer's GstBuffer wraps the same immutable EncodedUnit.
//
// Life: negotiate() (on the HTTP thread) -> connected (webrtcbin's connection-state) -> push()
// delivers units -> the session reports its end (peer closed, ICE failed, RTCP BYE, the timeout of an
// SSRC the viewer reported from, pipeline error) through Events::onEnded; its owner then destroys it
// off GStreamer's threads.
// A viewer that vanishes without a word (killed browser, pulled cable) is found by the owner's
// periodic goneReason(): ICE/peer connection "disconnected" for kDisconnectGrace, or RTCP silence:
// no report from the viewer for four times the longest gap it has shown between reports, at least
// kRtcpSilence and at most kRtcpSilenceMax. The floor covers one regular report interval of an RFC 4585
// (AVPF) receiver such as GStreamer's webrtcbin: it opens with a burst of reports 0.5 s apart, then
// reports every T_rr_interval, randomised to 2.5-7.5 s, so the gaps seen first say nothing about the
// next one (a 5 s floor ended such viewers 6 s after they joined). Browsers report about every second,
// so they are found 10 s after they vanish. libnice's own checks take 25-30 s.
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
#include "stream/keyframe_request_limit.hpp"
#include "stream/retransmission_budget.hpp"
#include "stream/rtcp_report_blocks.hpp"
#include "stream/ssrc_gate.hpp"
#include "stream/video_offer.hpp"
#include "stream/rtp_appsrc_feed.hpp"
#include "stream/rtp_extension_payloads.hpp"
#include "zerohop/encoded_unit.hpp"

namespace zerohop::stream {

/// A session's ICE servers and ports, as webrtcbin takes them (built by ice_servers.hpp's IceServers).
struct SessionIce {
  std::string stunServer;                ///< "stun-server", or empty
  std::vector<std::string> turnServers;  ///< one "add-turn-server" each
  std::uint16_t minPort = 0;             ///< UDP ports of the host candidates; 0, 0: any
  std::uint16_t maxPort = 0;
};

class ViewerSession : public std::enable_shared_from_this<ViewerSession> {
 public:
  struct Events {
    std::function<void()> onConnected;                       ///< the viewer can receive media now
    std::function<void()> onKeyframeRequest;                 ///< PLI/FIR from the viewer, or it fell behind
    std::function<void(const std::string& reason)> onEnded;  ///< called at most once
    std::function<void(std::function<void()>)> post;         ///< runs a task later on the owner's loop thread
  };

  /// What the sender writes besides the video: the RTP header extensions the offer has and we send
  /// (VideoChoice::extensions: playout-delay with these bounds, abs-capture-time, transport-wide-cc).
  struct SendOptions {
    PlayoutDelay playoutDelay;  ///< 0/0: render each frame as soon as it is decoded
    bool omitPlayoutDelay;  ///< true: the extension is left out of the answer even when offered
  };

  static constexpr unsigned kMaxQueuedUnits = 8;
  /// ICE or the peer connection "disconnected" this long (without coming back) ends the session.
  static constexpr std::chrono::seconds kDisconnectGrace{5};
  /// RTCP silence that ends a connected session: 4x the viewer's longest report gap, within these
  /// (the floor: an AVPF receiver's longest regular interval, 7.5 s, plus a margin; see above).
  static constexpr std::chrono::seconds kRtcpSilence{10};
  static constexpr std::chrono::seconds kRtcpSilenceMax{20};
  /// The viewer SSRCs remembered (a browser reports from one or two).
  static constexpr std::size_t kMaxViewerSsrcs = 8;

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

  const std::string& id() const { return id_; }
  /// What this viewer receives (VideoChoice::codec): kH264 or kVP8; push() takes units of it only.
  PixelFormat codec() const { return choice_.codec; }
  /// The choice made from its offer (codec, payload type, the offered and the stream's H.264 level).
  const VideoChoice& choice() const { return choice_; }
  bool connected() const { return connected_.load(); }
  /// CLOCK_MONOTONIC ns when the session was created (for a WHEP viewer: when its POST was taken).
  std::int64_t createdNs() const { return createdNs_; }
  /// CLOCK_MONOTONIC ns when the peer connection first became connected; 0 = not yet.
  std::int64_t connectedNs() const { return connectedNs_.load(); }
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
  struct FeedbackReading {
    struct ReceiverReport {
      double fractionLost = 0;      ///< 0..1, over the report's interval
      double rttMs = 0;             ///< from LSR/DLSR; 0 when the report had no LSR yet
      std::uint32_t highestSeq = 0;  ///< extended highest sequence received: changes with each new report
    };
    struct TransportWindow {
      unsigned packetsSent = 0, packetsReceived = 0;
      double lossPercent = 0;
      double sentKbps = 0, receivedKbps = 0;  ///< 0 when GStreamer did not compute them
      double avgDeltaOfDeltaMs = 0;  ///< mean (arrival gap - send gap) of the window's packets: > 0, a queue grows
    };
    std::optional<ReceiverReport> report;
    std::optional<TransportWindow> transport;
    std::uint64_t octetsSent = 0;  ///< RTP payload bytes of our media SSRC so far (no RTX)
    std::uint64_t nackRequests = 0;  ///< packets the viewer asked to be resent so far (RTCP NACK, repeats counted)
  };
  FeedbackReading readFeedback() const;
  /// The viewer's latest RTCP report block about our media SSRC, read from its compound packets (every
  /// block, whatever its place: rtcp_report_blocks.hpp); nullopt before one came.
  std::optional<RtcpReportBlock> lastMediaReport() const;
  /// Our media SSRC (the answer's a=ssrc).
  std::uint32_t mediaSsrc() const { return ssrc_; }
  /// The viewer's estimate (kb/s) and RTT (ms) for the retransmission budget (retransmission_budget.hpp).
  void setRetransmissionPath(std::uint32_t estimateKbps, double rttMs);
  struct Retransmissions {
    std::uint64_t resent = 0, refused = 0, resentBytes = 0;  ///< NACKed packets resent / passed over so far
    std::uint64_t keyframes = 0;                              ///< keyframes sent
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
  /// looks alive: disconnected for longer than kDisconnectGrace, or RTCP silent (see above).
  std::string goneReason(std::int64_t nowNs) const;

 private:
  struct Waiter;
  /// The session behind a GStreamer callback's user data. Callbacks run on GStreamer's threads, often
  /// pooled ones that existed before this session; the acquire pairs with the constructor's release
  /// of published_ so ThreadSanitizer sees the members initialised (GLib's futex locks, which really
  /// order this, are invisible to it; see glib_handoff.hpp).
  static ViewerSession* fromGst(gpointer data);
  using Deadline = std::chrono::steady_clock::time_point;
  /// Runs one webrtcbin action signal and waits (bounded, abortable) for its promise.
  GstPromisePtr callWebrtc(const char* signal, gpointer arg, Deadline deadline, std::chrono::milliseconds timeout);
  void setRemote(GstWebRTCSDPType type, const std::string& sdp, Deadline deadline, std::chrono::milliseconds timeout);
  /// "create-offer" or "create-answer", set it locally without the RTX SSRC's a=ssrc lines (they would
  /// be interned as names for good: sdp_repair_ssrc.hpp), wait for ICE gathering; the local SDP with
  /// those lines back in.
  std::string describeLocally(const char* create, Deadline deadline, std::chrono::milliseconds timeout);
  static void onConnectionState(GstElement* webrtc, GParamSpec*, gpointer self);
  static void onIceConnectionState(GstElement* webrtc, GParamSpec*, gpointer self);
  static void onIceGatheringState(GstElement* webrtc, GParamSpec*, gpointer self);
  static void onBye(GstElement* rtpbin, guint session, guint ssrc, gpointer self);
  static void onTimeout(GstElement* rtpbin, guint session, guint ssrc, gpointer self);
  static void onSsrcActive(GstElement* rtpbin, guint session, guint ssrc, gpointer self);
  static void onNewSsrc(GstElement* rtpbin, guint session, guint ssrc, gpointer self);
  static void onReceivingRtcp(GObject* session, GstBuffer* buffer, gpointer self);
  static GstPadProbeReturn onUpstreamEvent(GstPad* pad, GstPadProbeInfo* info, gpointer self);
  static GstPadProbeReturn onFirstPacket(GstPad* pad, GstPadProbeInfo* info, gpointer self);
  static GstElement* onRequestAuxSender(GstElement* webrtc, GObject* transport, gpointer self);
  static GstPadProbeReturn onSentRtp(GstPad* pad, GstPadProbeInfo* info, gpointer self);
  static GstPadProbeReturn onRetransmissionRequest(GstPad* pad, GstPadProbeInfo* info, gpointer self);
  static GstBusSyncReply onBusMessage(GstBus* bus, GstMessage* message, gpointer self);

  /// Puts inboundGate_ in front of each transport's SRTP decoder (ssrc_gate_probe.hpp).
  void gateInbound();
  void end(const std::string& reason);
  void noteDisconnected(bool disconnected);
  void requestKeyframe();
  void recalculateLatency();

  const std::string id_;
  const VideoChoice choice_;
  const std::int64_t createdNs_;
  Events events_;

  GstPtr<GstElement> pipeline_;
  GstElement* appsrc_ = nullptr;  // borrowed from pipeline_
  GstElement* webrtc_ = nullptr;  // borrowed from pipeline_
  GstPtr<GstElement> rtpbin_;     // webrtcbin's internal rtpbin (for BYE/timeout)

  // Guards callbacks against the destructor: a callback runs only while alive_ is true.
  mutable std::mutex callbackMutex_;
  // Held by each of webrtcbin's state-notify callbacks for its whole run (they read members before
  // they know whether to take callbackMutex_); the destructor takes it once the pipeline is stopped.
  // Order: signalMutex_ before callbackMutex_, never the reverse.
  std::mutex signalMutex_;
  bool alive_ = true;
  bool ended_ = false;

  // Negotiation waits.
  std::mutex waitMutex_;
  std::condition_variable waitCv_;
  bool gatheringComplete_ = false;
  bool stunOrTurn_ = false;  // ICE servers given: a gathering that does not complete is not fatal
  bool aborted_ = false;

  // Which NACKed packets are resent: the probes around webrtcbin's rtprtxsend (send path, RTCP thread)
  // and setRetransmissionPath (the owner's loop) meet here.
  mutable std::mutex rtxMutex_;
  RetransmissionBudget rtx_;
  // Every report block the viewer sends (rtcp_report_blocks.hpp): rtpsession's stats keep only its last
  // block about any of our sources, which may be the RTX one's. Written on the RTCP thread.
  GObject* rtcpSession_ = nullptr;  // rtpbin's internal session 0 (a reference; null until onNewSsrc)
  mutable std::mutex reportMutex_;
  std::optional<RtcpReportBlock> mediaReport_;  // the viewer's latest block about our media SSRC
  KeyframeRequestLimit keyframeLimit_;  // the viewer's PLI/FIR (onUpstreamEvent, RTCP thread; push())
  std::atomic<bool> keyframeDeferred_{false};  // a PLI/FIR held back by keyframeLimit_, not yet served

  // What the peer may send into the RTP stack (ssrc_gate.hpp); the nicesrc probes share it.
  const std::shared_ptr<SsrcGate> inboundGate_ = std::make_shared<SsrcGate>();
  GstPtr<GstRTPHeaderExtension> playoutDelayExt_;  // the payloader's, when negotiated (setPlayoutDelay)
  std::unique_ptr<AppsrcFeed> feed_;  // nothing until a keyframe, overflow policy (rtp_appsrc_feed.hpp)
  std::atomic<bool> connected_{false};
  std::atomic<bool> published_{false};

  // Liveness (CLOCK_MONOTONIC ns; 0 = never / not now), written on GStreamer threads.
  guint ssrc_ = 0;  // ours, to tell our own RTCP from the viewer's
  std::vector<guint> viewerSsrcs_;  // the SSRCs the viewer's reports came from (under callbackMutex_)
  std::atomic<std::int64_t> connectedNs_{0};
  std::atomic<std::int64_t> firstPacketNs_{0};
  std::atomic<std::int64_t> lastRtcpNs_{0};
  std::atomic<std::int64_t> longestRtcpGapNs_{0};
  std::atomic<std::int64_t> disconnectedSinceNs_{0};
};

}  // namespace zerohop::stream
