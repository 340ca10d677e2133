#pragma once
// StreamServer's private state: one StreamState per stream (the unnamed one POST /whep plays, named
// kUnnamedStream, and each addStream() made) in streams_, one SessionRecord per WHEP session in
// sessions_, the HTTP server and the GLib loop thread.
// Thread-safety: thread-safe. Each member of a StreamState or a SessionRecord says the mutex that guards it:
// - streamsMutex_ guards streams_ and each StreamState::added (a leaf). A stream is never removed, so a
//   StreamState& stays valid as long as the server;
// - mutex_ guards sessions_ and stopping_;
// - handlerMutex_ the callbacks, the streams' keyframe requesters (called under it: they only set a flag);
// - rateMutex_ the streams' and the sessions' rates (a leaf).
// Lock order: mutex_ -> a session's own locks -> handlerMutex_ (publish() pushes under mutex_, and a
// push may ask for a keyframe); mutex_ -> rateMutex_.

#include <httplib.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "stream/adaptive_playout_delay.hpp"
#include "stream/bitrate_controller.hpp"
#include "stream/encode_targets.hpp"
#include "stream/deadline_http_server.hpp"
#include "stream/glib_loop_thread.hpp"
#include "stream/ice_servers.hpp"
#include "stream/renditions.hpp"
#include "stream/viewer_session.hpp"
#include "stream/webrtc_warmup.hpp"
#include "zerohop/stream_server.hpp"

namespace zerohop {

/// The name of the unnamed stream (StreamServer::unnamedStream()) in StreamServer::Impl's table of streams. A
/// stream addStream() makes is named of [A-Za-z0-9_-] only, so none can take it.
inline constexpr std::string_view kUnnamedStream = "(unnamed)";

class StreamServer::Impl {
 public:
  class NamedStream;  // a WhepStream (whep_stream.cpp)
  struct StreamState;
  struct SessionRecord;

  /// How long POST /whep may take (applying the offer, answering, gathering ICE) before 503.
  static constexpr std::chrono::milliseconds kNegotiationTimeout{3000};
  /// A session that has not connected this long after its answer is ended (the viewer never came).
  static constexpr std::chrono::seconds kConnectTimeout{15};
  /// Sessions one client address may have that have not connected yet: max(2, maxViewers / 4), so
  /// offers that never finish ICE cannot fill maxViewers from one address (past it 503 + Retry-After).
  /// Behind a proxy every client has the proxy's address: then it bounds negotiations in total.
  std::size_t negotiatingPerAddress() const { return std::max<std::size_t>(2, config_.maxViewers / 4); }
  /// Descriptors kept free for GLib/GStreamer (wakeup pipes, sockets of the sessions that exist), and
  /// what one new session may take: a POST /whep that would leave fewer answers 503 (never g_error).
  static constexpr std::size_t kDescriptorReserve = 128;
  static constexpr std::size_t kDescriptorsPerSession = 64;
  /// The HTTP side's limits (connections, timeouts, request sizes, workers; see DeadlineHttpServer
  /// and docs/exposure.md); maxBodyBytes comes from StreamConfig.
  static stream::HttpServerLimits httpLimits(const StreamConfig& config);

  explicit Impl(StreamConfig config);
  ~Impl();

  // Streams (whep_stream.cpp).
  /// The stream of `name`, made (not yet added) when there is none.
  StreamState& streamNamed(std::string_view name);
  /// The stream addStream() made of `name`; null when there is none.
  StreamState* addedStream(std::string_view name) const;
  /// Every stream, in name order (a snapshot: streams are never removed).
  std::vector<StreamState*> streamList() const;
  StreamState& unnamed() const { return *unnamed_; }
  /// The stream POST /whep plays: config_.defaultStream's (made in the constructor, so viewers may come
  /// before its addStream()), or the unnamed one.
  StreamState& defaultStream() const { return *defaultStream_; }
  /// True when `segment` (of /whep/<segment>) is an endpoint: "" (/whep/ itself) or a stream addStream() made.
  bool hasStream(const std::string& segment) const;
  /// Names of the streams addStream() made, comma-separated (for a 404's reason).
  std::string streamNames() const;

  // HTTP handlers (whep_routes.cpp).
  void installRoutes();
  void handleWhepPost(const httplib::Request& req, httplib::Response& res, StreamState& stream);
  void handleWhepDelete(const httplib::Request& req, httplib::Response& res);
  void handleWhepPatch(const httplib::Request& req, httplib::Response& res);
  void handleWhepSessionGet(const httplib::Request& req, httplib::Response& res);
  bool knownSession(const std::string& id) const;
  /// A viewer's choice of rendition (whep_layer.cpp; stream/layer_request.hpp): GET lists its stream's
  /// ladder, POST sets the highest rung it takes. The layer URL's Link for a new session of `stream`
  /// (none without a ladder).
  void handleLayerGet(const httplib::Request& req, httplib::Response& res);
  void handleLayerPost(const httplib::Request& req, httplib::Response& res);
  std::optional<std::string> layerLink(const StreamState& stream, const std::string& id) const;
  /// The session `id`'s record, its stream's ladder and the rung it takes now; false with an error
  /// answer in `res` (404 unknown session, 409 a VP8 viewer or a stream without a ladder).
  bool layerTarget(const std::string& id, httplib::Response& res, std::shared_ptr<SessionRecord>& record,
                   std::vector<Rendition>& ladder, std::size_t& current) const;
  void handleStats(const httplib::Request& req, httplib::Response& res);
  void handleMetrics(const httplib::Request& req, httplib::Response& res);
  /// One session's STUN/TURN servers and ports for webrtcbin; its Link headers (RFC 9725 §4.6) in `links`.
  stream::SessionIce sessionIce(std::vector<std::string>& links) const;
  /// False (and a 401 in `res`) when a WHEP token is configured and the request lacks it.
  bool authorized(const httplib::Request& req, httplib::Response& res) const;
  void handleStatic(const httplib::Request& req, httplib::Response& res);

  // Sessions (stream_server.cpp).
  void publish(StreamState& stream, const EncodedUnitPtr& unit);
  /// One Opus packet to the viewers of `stream` that receive audio; the first makes hasAudio(stream) true.
  void publishAudio(StreamState& stream, const EncodedUnitPtr& unit);
  bool hasAudio(const StreamState& stream) const;
  /// 1, or 2 once a packet of `stream` was stereo.
  int audioChannels(const StreamState& stream) const;
  /// Of `stream`'s viewers (null: every stream's), the ended ones included.
  StreamAudioSent audioSent(const StreamState* stream) const;
  std::size_t viewerCount() const;
  std::size_t viewerCount(const StreamState& stream) const;
  /// Of every session (`stream` null) or of those of one stream.
  std::vector<ViewerStats> viewerStats(const StreamState* stream = nullptr) const;
  /// Removes the session from the table and destroys it on the calling thread; false when unknown.
  bool endSession(const std::string& id, const std::string& reason);
  /// Called from GStreamer threads: destroys the session later, on the loop thread.
  void endSessionLater(const std::string& id, const std::string& reason);
  /// A keyframe of `stream`'s encode of `codec` and rung `rung`: to the stream's encode requester when
  /// one is set, else to its keyframe requester (every encode). Takes handlerMutex_ (a leaf).
  void requestKeyframe(StreamState& stream, Codec codec, std::size_t rung);
  /// A viewer of `stream` (receiving `codec`) needs a keyframe: of the rung it takes or is moving to
  /// (its record's keyframeRung), so its requests reach its own encode only.
  void requestViewerKeyframe(StreamState& stream, const std::atomic<std::size_t>& keyframeRung, Codec codec);
  /// UnitSink of `stream` (the unnamed one's, a named one's): its pipeline's requesters, ladder and
  /// codecs; dropped again; whether a session of it takes `track` now; `track`'s encode target.
  void attach(StreamState& stream, const SinkSetup& setup);
  void detach(StreamState& stream);
  bool wants(const StreamState& stream, TrackKey track) const;
  std::uint32_t targetKbps(const StreamState& stream, TrackKey track) const;
  void setCodecAvailability(StreamState& stream, Codec codec, std::string whyNot);
  /// Renditions (docs/ARCHITECTURE.md, "Renditions"): `stream`'s ladder (stream_congestion.cpp places
  /// each viewer on it; `vp8`: its VP8 viewers too), whether a viewer of `codec` takes rung `rung` now,
  /// and that rung's encode target.
  void setRenditions(StreamState& stream, const std::vector<Rendition>& ladder, bool vp8);
  bool wantsRendition(const StreamState& stream, std::size_t rung, Codec codec = Codec::kH264) const;
  std::uint32_t renditionTargetKbps(const StreamState& stream, std::size_t rung,
                                    Codec codec = Codec::kH264) const;
  /// What `stream` can send besides H.264 (VP8 once its pipeline said so).
  stream::SendableCodecs sendable(const StreamState& stream) const;
  void reapStaleSessions();

  // Congestion control (stream_congestion.cpp): every kBitrateTickMs on the loop thread, each connected
  // viewer's feedback updates its estimate, and each of a stream's encodes (H.264, VP8) follows the
  // weakest viewer of its codec.
  static constexpr unsigned kBitrateTickMs = 250;
  void setMaxBitrate(StreamState& stream, std::uint32_t kbps);
  std::uint32_t targetBitrateKbps(const StreamState& stream, Codec codec) const;
  StreamBitrate bitrate(const StreamState& stream, Codec codec) const;
  void countPublished(StreamState& stream, Codec codec, std::size_t bytes);
  void updateBitrates();
  struct ViewerRate;
  void adaptPlayoutDelay(const std::string& id, stream::ViewerSession& session, ViewerRate& r,
                         stream::PlayoutDelay base, std::int64_t nowNs);
  /// Fills the congestion fields of `t` for the session of `record`.
  void fillCongestion(const SessionRecord& record, ViewerStats& t) const;

  StreamConfig config_;
  stream::ViewerSession::SendOptions sendOptions_{};  // from config_ (the RTP header extensions)
  stream::IceServers iceServers_;  // checked in the constructor
  bool loopbackHost_ = false;
  bool tls_ = false;  // HTTPS (config_.tlsCertFile/tlsKeyFile)
  std::uint16_t boundPort_ = 0;

  struct ViewerRate {  // one viewer's controller and what it last read (stream_congestion.cpp)
    Codec codec = Codec::kH264;  // the encode it receives (its estimate counts for that one)
    stream::BitrateController controller;
    stream::ViewerSession::FeedbackReading last;
    bool sawFeedback = false;  // counts for its stream's target from its first report on
    std::int64_t lastReadNs = 0;
    double sentKbps = -1, lossPercent = -1, rttMs = -1, receivedKbps = -1;
    std::int64_t lossKeyframeNs = 0;  // when a loss burst of this viewer's last asked for a keyframe
    std::uint64_t nacksAtReport = 0;  // its NACK count when its latest receiver report came (creditedReportLoss)
    std::optional<stream::AdaptivePlayoutDelay> playout;  // with StreamConfig::adaptivePlayoutDelay
    bool playoutSent = false;  // its offer had the playout-delay extension: playout is what it gets
    std::optional<stream::RenditionPlacement> placement;  // H.264 viewers of a stream with a ladder
  };
  struct SentWindow {  // what one encode of a stream published over the last second
    std::uint64_t bytesSinceTick = 0;
    std::uint64_t window[1000 / kBitrateTickMs] = {};  // bytes published in each of the last ticks
    std::size_t windowNext = 0;
    double sentKbps = 0;
    void tick();
  };
  struct StreamRate {  // one stream's encode targets (H.264, VP8)
    explicit StreamRate(stream::BitrateLimits limits) : targets(limits) {}
    stream::EncodeTargets targets;
    bool maxSet = false;
    SentWindow h264, vp8;
    std::vector<Rendition> ladder;               // empty: no ladder
    std::vector<stream::EncodeTarget> rungTargets;  // one per rung: its viewers' weakest estimate in its range
    bool vp8Ladder = false;                         // VP8 viewers are placed on the ladder too
    std::vector<stream::EncodeTarget> vp8RungTargets;  // the same for the VP8 encodes of the rungs
    /// Whether `codec`'s viewers are placed on the ladder (H.264 with one; VP8 where its rungs are made).
    bool laddered(Codec codec) const {
      return !ladder.empty() && (codec == Codec::kH264 || (codec == Codec::kVP8 && vp8Ladder));
    }
    std::vector<stream::EncodeTarget>& rungTargetsOf(Codec codec) {
      return codec == Codec::kVP8 ? vp8RungTargets : rungTargets;
    }
    const std::vector<stream::EncodeTarget>& rungTargetsOf(Codec codec) const {
      return codec == Codec::kVP8 ? vp8RungTargets : rungTargets;
    }
    SentWindow& sent(Codec codec) { return codec == Codec::kVP8 ? vp8 : h264; }
    const SentWindow& sent(Codec codec) const { return codec == Codec::kVP8 ? vp8 : h264; }
    /// The range of a `codec` viewer's own estimate: the stream's; placed on a ladder, down to its lowest
    /// rung's floor where that is under --min-bitrate (a viewer behind 300 kbit/s would otherwise be held
    /// at a 300 kb/s estimate, its rung filling the whole link).
    stream::BitrateLimits viewerLimits(Codec codec) const {
      stream::BitrateLimits l = targets.limits();
      if (laddered(codec)) {
        for (const Rendition& rung : ladder) l.minKbps = std::min(l.minKbps, rung.minKbps);
      }
      return l;
    }
  };
  struct H264Format {  // what the stream's last H.264 keyframe said (its SPS's level_idc, the unit's size)
    int level = 0;
    std::uint32_t width = 0, height = 0;
  };
  using EncodeKeyframeHandler = std::function<void(TrackKey)>;

  /// One stream: what its pipeline set (keyframe requesters, codecs, ladder, bitrate ceiling) and what
  /// the server keeps of its viewers (their rung moves and audio counts, its encode targets).
  struct StreamState {
    explicit StreamState(std::string streamName) : name(std::move(streamName)) {}
    const std::string name;  // kUnnamedStream: StreamServer::unnamedStream()
    bool added = false;      // made by addStream() (POST /whep/NAME plays it); streamsMutex_
    // handlerMutex_:
    std::function<void()> keyframeHandler;
    EncodeKeyframeHandler encodeKeyframeHandler;  // called instead of keyframeHandler once set
    std::optional<stream::SendableCodecs> sendable;  // none: its pipeline never said (H.264 only)
    bool audio = false;  // publishAudio() has fed it
    int audioChannels = 1;  // 2 once a packet's TOC said stereo (RFC 6716 §3.1)
    H264Format h264Format;
    // mutex_:
    std::vector<std::uint64_t> switchesTo;  // per rung, its viewers' moves onto it so far (publish() counts them)
    std::vector<std::uint64_t> vp8SwitchesTo;  // the same for its VP8 viewers
    StreamAudioSent audioCounts;            // sent, and dropped by ended sessions
    // rateMutex_:
    std::optional<StreamRate> rate;  // from its first unit, ceiling or ladder on (streamRate())
    /// " NAME" in a log line, "" for the unnamed stream (its lines name none).
    std::string logName() const { return name == kUnnamedStream ? std::string() : " " + name; }
  };

  /// One WHEP session, from its POST /whep until it ends.
  struct SessionRecord {
    std::shared_ptr<stream::ViewerSession> session;  // mutex_; null while POST /whep builds it
    std::string address;                             // the client address of its POST /whep
    StreamState* stream = nullptr;                   // the stream it plays
    // mutex_: which rung's units its track takes (its codec's; made by publish(), moved by
    // updateBitrates()). Without a ladder every viewer stays on rung 0, so units of other rungs reach no one.
    std::optional<stream::RungRoute> route;
    // The rung its keyframe requests are for: its route's target (the rung it takes, or the one it is
    // moving to, whose first keyframe completes the move); 0 until placed, and once ended. Set where the
    // target is (updateBitrates, under mutex_), read by its requests on any thread (its events hold it).
    std::shared_ptr<std::atomic<std::size_t>> keyframeRung = std::make_shared<std::atomic<std::size_t>>(0);
    // The highest rung the viewer chose to take (POST to its layer URL); -1: its estimate decides alone.
    // Set by the HTTP thread, applied by updateBitrates() at its next tick.
    std::atomic<int> topRung{-1};
    std::atomic<std::int64_t> topRungChangedNs{0};  // when the choice last changed (at most one a second)
    std::optional<ViewerRate> rate;  // rateMutex_; while it is connected (updateBitrates())
    // The playout delay it starts from (the configured one; raised for lip sync: POST /whep?lipsync=1);
    // set before the session exists, read-only after.
    stream::PlayoutDelay playoutBase;
  };

  mutable std::mutex streamsMutex_;
  std::map<std::string, std::unique_ptr<StreamState>, std::less<>> streams_;  // name ->
  StreamState* unnamed_ = nullptr;        // streams_[kUnnamedStream]
  StreamState* defaultStream_ = nullptr;  // what POST /whep plays

  mutable std::mutex mutex_;
  std::map<std::string, std::shared_ptr<SessionRecord>> sessions_;  // session id ->
  bool stopping_ = false;
  std::vector<std::uint64_t> rungSwitches(const StreamState& stream, Codec codec = Codec::kH264) const;
  H264Format h264Format(const StreamState& stream) const;

  mutable std::mutex handlerMutex_;
  std::function<std::string()> statsProvider_;
  std::function<std::string()> metricsProvider_;

  mutable std::mutex rateMutex_;  // guards the streams' and sessions' rates; a leaf: nothing is locked under it
  StreamRate& streamRate(StreamState& stream);  // under rateMutex_

  std::unique_ptr<stream::GlibLoopThread> loop_;
  std::unique_ptr<stream::DeadlineHttpServer> http_;
  std::thread httpThread_;
  std::atomic<bool> httpExited_{false};
  std::unique_ptr<stream::WebrtcWarmup> warmup_;  // set last in the constructor
};

/// 128 random bits from getrandom(2) as 32 lower-case hex digits. Throws Error(kIo) on failure.
std::string newSessionId();

}  // namespace zerohop
