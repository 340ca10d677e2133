#pragma once
// StreamServer: the WebRTC sender and its HTTP front (WHEP signalling, the viewer page, /stats).
//
// One encode is shared by every viewer: a stream's deliver() hands the same immutable EncodedUnit to each
// viewer's own GStreamer pipeline (appsrc -> rtph264pay -> webrtcbin), without copying the bytes.
// Signalling is WHEP (non-trickle): POST /whep with an SDP offer answers 201 with the complete SDP
// answer (ICE candidates included) and Location: /whep/<session-id>; DELETE on it ends the session.
// Endpoints, status codes and the threading model are described in docs/stream.md.
//
// Thread-safety: thread-safe; every member may be called from any thread. Owns an HTTP thread pool
// and one GLib main-loop thread; the destructor stops both and ends every session.

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "zerohop/export.h"
#include "zerohop/encoded_unit.hpp"
#include "zerohop/sinks.hpp"

namespace zerohop {

struct StreamConfig {
  std::string host = "127.0.0.1";  ///< address to listen on; a loopback host also makes ICE use 127.0.0.1
  std::uint16_t port = 8080;       ///< 0 = let the kernel pick a free port (tests); see StreamServer::port()
  std::uint32_t maxViewers = 16;   ///< POST /whep past it answers 503
  std::string webRoot;             ///< empty = the copy of web/ embedded at build time; else serve this dir
  std::size_t maxBodyBytes = 64 * 1024;  ///< request bodies past it answer 413
  /// Non-empty: POST/DELETE/PATCH on /whep need `Authorization: Bearer <whepToken>` (401 otherwise;
  /// compared in constant time). It guards who may start and end sessions; it does not hide the
  /// page, or /stats and /metrics unless protectStats, and without TLS it travels in clear text.
  std::string whepToken;
  /// Both non-empty: serve HTTPS only (the page, WHEP, /stats, /metrics; `serve --tls-cert --tls-key`)
  /// with this PEM certificate chain (the server's certificate first: Let's Encrypt's fullchain.pem)
  /// and its unencrypted PEM private key (privkey.pem); TLS 1.2 or newer, HTTP/1.1. Read once, at start.
  /// Error(kInvalidArgument) naming the file when one cannot be read or is not PEM, when the key does
  /// not match the certificate, or when only one of the two is given. A certificate that expired or is
  /// not yet valid logs a warning (browsers will refuse it). See docs/exposure.md, "HTTPS".
  std::string tlsCertFile;
  std::string tlsKeyFile;
  /// With a whepToken: GET /stats and /metrics need it too (401 otherwise). The page stays public.
  bool protectStats = false;
  /// The RTP playout-delay extension sent to viewers whose offer has it (Chromium's does): the least and
  /// most time, in ms, the receiver should hold each frame between capture and display (0..40950, in
  /// steps of 10). 0/0, for live: display each frame as soon as it is decoded. Error(kInvalidArgument)
  /// otherwise, or when min > max.
  int playoutDelayMinMs = 0;
  int playoutDelayMaxMs = 0;
  /// Raise one viewer's playout delay while its path repairs lost packets slowly (its NACKs keep coming
  /// and its RTT is 60 ms or more): the minimum becomes 1.5 x RTT + 50 ms, so a frame that needed a
  /// retransmission is still shown in time instead of freezing the picture; back to the delay above
  /// 20 s after the last retransmission. `serve --playout-delay auto` (the default); a fixed
  /// `--playout-delay MIN,MAX` turns it off. See docs/stream.md, "Playout delay".
  bool adaptivePlayoutDelay = true;
  /// false: the playout-delay extension is not negotiated at all, as with GStreamer's webrtcbin alone (the
  /// comparison sender of the benchmarks; or a receiver that mishandles it). Nothing is then raised.
  bool sendPlayoutDelay = true;
  /// Non-empty: POST /whep plays the stream of this name (addStream(); `serve`'s first camera) instead
  /// of the unnamed stream. POST /whep/NAME plays any named stream either way.
  std::string defaultStream;
  /// At start, load on a background thread what the first session would otherwise load while its
  /// viewer waits: the GStreamer plugins and the process's DTLS certificate (0.3-1 s of one core, once
  /// per process). Off: the first POST /whep pays it (the destructor then never waits for it).
  bool warmUp = true;

  /// ICE servers (`serve --ice-server`, docs/stream.md "ICE"): stun://HOST[:PORT],
  /// turn://USER:PASS@HOST[:PORT][?transport=tcp], turns://USER:PASS@HOST[:PORT]. Every session's
  /// webrtcbin uses them (the WHIP session's too: PipelineConfig::stream's, via makeWhipSink), and the WHEP player gets them as `Link: <...>; rel="ice-server"` headers
  /// (RFC 9725 §4.6) on the 201 and on OPTIONS /whep. A malformed URL: Error(kInvalidArgument).
  std::vector<std::string> iceServers;
  /// TURN REST API shared secret (coturn's static-auth-secret): TURN servers given without USER:PASS get
  /// credentials valid for turnCredentialSeconds from each POST /whep.
  std::string turnSecret;
  std::uint32_t turnCredentialSeconds = 86400;
  /// Non-empty: the answer's host candidates carry this IPv4/IPv6 address instead of the one libnice
  /// finds, ports unchanged (`--ice-host`: a 1:1 NAT, e.g. a cloud VM's public address).
  std::string iceHost;
  /// UDP ports for ICE (`--udp-ports MIN-MAX`), one per viewer; 0, 0 = any the kernel gives.
  std::uint16_t udpPortMin = 0;
  std::uint16_t udpPortMax = 0;

  /// Congestion control (`serve --congestion-control on|off`, docs/stream.md "Congestion control"): each
  /// viewer's RTCP feedback (transport-cc, receiver reports) gives it a bandwidth estimate, and the one
  /// encode runs at the lowest estimate of the viewers, between minBitrateKbps and the maximum the
  /// pipeline sets (its configured bitrate, setMaxBitrate()). Off: the encoder keeps its bitrate.
  bool congestionControl = true;
  /// `serve --min-bitrate`; above the maximum it is the maximum. A viewer placed on a ladder of renditions
  /// goes down to the lowest rung's own minimum where that is lower.
  std::uint32_t minBitrateKbps = 300;
  /// The unnamed stream has sound from the start: offers with an Opus section get an audio track even
  /// before its first publishAudio() packet (FrameStreamConfig::audioChannels). Without it the first
  /// publishAudio() makes the stream one with sound.
  bool sound = false;
};

/// The bitrate of one of a stream's encodes (H.264, or VP8) as congestion control sets it
/// (StreamServer::bitrate(codec)). The limits are the stream's, the same for both.
struct StreamBitrate {
  bool congestionControl = false;  ///< on, and a maximum was set (an encoder follows targetKbps)
  std::uint32_t minKbps = 0, maxKbps = 0;
  std::uint32_t targetKbps = 0;  ///< what the encoder is asked for; 0 = no target (off, or passthrough)
  double sentKbps = 0;           ///< what the encoder made, over the last second (every access unit published)
};

/// One viewer as /stats shows it (StreamServer::viewerStats): how long it took to start, from its POST
/// /whep, and what its transport-wide congestion control feedback says.
struct ViewerStats {
  std::string id;            ///< the first 8 hex digits of the session id (its Location ends in the whole id)
  bool connected = false;    ///< ICE and DTLS are up now
  double connectMs = -1;     ///< POST -> the peer connection connected; -1 while it has not
  double firstFrameMs = -1;  ///< POST -> the first RTP packet of its first keyframe sent; -1 while none was
  /// From the viewer's RTCP transport-cc feedback (the transport-wide-cc extension), over GStreamer's
  /// last feedback window: packets it reported received, and the share lost; -1 before any feedback.
  int twccPacketsReceived = -1;
  double twccLossPercent = -1;
  std::string codec =
      "H264";  ///< its video: "H264" or "VP8" (chosen from its offer), "none" for the sound alone
  /// H.264 only: the level of the profile-level-id it offered and we answered ("3.1"), the level of the
  /// stream's SPS when it joined ("4.0"; empty: not known, no keyframe published yet), and whether the
  /// offered level covers it (1, 0; -1: not known or VP8). 0 means it receives above its offered level.
  std::string h264LevelOffered;
  std::string h264LevelSent;
  int levelCovered = -1;
  /// Congestion control's view of this viewer (-1: not known yet): its bandwidth estimate, the RTP rate
  /// we sent it over the last second, the loss and round trip its feedback reported, the rate it received
  /// at (transport-cc).
  double estimateKbps = -1;
  double sentKbps = -1;
  double lossPercent = -1;
  double rttMs = -1;
  double receivedKbps = -1;
  /// The playout delay (ms) it is asked for now (StreamConfig::adaptivePlayoutDelay raises it while its
  /// lost packets come back slowly); -1: not known yet, or its offer had no playout-delay extension.
  int playoutDelayMinMs = -1;
  int playoutDelayMaxMs = -1;
  /// The target of the encode it receives (its codec's: the weakest viewer of that codec); -1: none
  /// (congestion control off, or no maximum set).
  double encodeTargetKbps = -1;
  /// The rung of the ladder of renditions whose units it receives now (0 = full size; VP8 viewers too,
  /// where the rungs are made in VP8) and how often it moved between rungs; -1 / 0: before its first unit,
  /// or the sound alone.
  int rung = -1;
  std::uint64_t rungSwitches = 0;
  /// Packets from this viewer dropped unread, before SRTP decryption: any RTP (serve only sends) and
  /// RTCP from sender SSRCs past its first four (a junk flood with fresh SSRCs; docs/reliability.md).
  std::uint64_t inboundDropped = 0;
  /// Its retransmission requests (NACKed packets): served (`repairs`; of those sent twice on a short
  /// round trip, `repairsTwice`) and passed over (past the once-per-RTT, budget and keyframe rules).
  std::uint64_t repairs = 0;
  std::uint64_t repairsTwice = 0;
  std::uint64_t repairsPassedOver = 0;
};

/// What the audio fan-out did (WhepStream::publishAudio): Opus packets handed to viewers, and those
/// dropped because a viewer's queue was full.
struct StreamAudioSent {
  std::uint64_t units = 0;
  std::uint64_t dropped = 0;
};

/// One stream of a StreamServer: POST /whep/NAME (or POST /whep, the unnamed stream) plays what
/// deliver() is fed. Made by StreamServer::addStream() (one per camera: CameraServer) or
/// unnamedStream(); it must not outlive its server.
/// - deliver(): non-blocking fan-out of one H.264 access unit (Annex B, SPS/PPS before every IDR) to
///   every connected viewer that receives H.264 (its rung, with a ladder), of one VP8 frame to every one
///   that receives VP8, of one Opus packet as publishAudio(). A viewer that just joined (or fell behind
///   and had units dropped) receives nothing until the next keyframe. A null unit is ignored.
/// - attach(): the setup's requestKeyframe is called (any thread, must not block) when a viewer becomes
///   connected, asks for a keyframe (RTCP PLI/FIR) or fell behind; with requestTrackKeyframe set, that
///   is called instead, naming the one track the viewer takes (H.264 and its rung, or VP8). Renditions:
///   with the setup's ladder, each H.264 viewer receives the rung its own estimate fits
///   (docs/ARCHITECTURE.md, "Renditions"), a unit's EncodedUnit::rendition says its rung; without one,
///   rung 0's units only. Codecs: VP8 is expected too unless the setup says why not (then an offer
///   without usable H.264 gets 422 with that reason); until attached, such an offer gets 422.
/// - wants(): true while a viewer receives the track (VP8: one whose offer had no usable H.264; a lower
///   rung: one placed on it; Opus: always, the sound is offered to every viewer). targetKbps(): a lower
///   rung's target (its viewers' weakest estimate within its range) or VP8's; 0 for the others.
/// Thread-safety: thread-safe. attach() may be called again (a camera's pipeline rebuilt); once
/// attach() or detach() returns, the previous setup's requesters are never called.
class ZEROHOP_API WhepStream : public UnitSink {
 public:
  /// Sessions of this stream that exist now (negotiating or connected).
  virtual std::size_t viewerCount() const = 0;
  /// The start-up times and feedback of this stream's sessions that exist now, oldest first.
  virtual std::vector<ViewerStats> viewerStats() const = 0;
  virtual const std::string& name() const = 0;
  /// The encodes' bitrate ceiling for congestion control (the pipeline's configured bitrate; H.264 and
  /// VP8 alike); until it is set (or with StreamConfig::congestionControl off) targetBitrateKbps() is 0.
  virtual void setMaxBitrate(std::uint32_t kbps) = 0;
  /// What this stream's encoder of `codec` should run at now (kb/s): the weakest estimate of the viewers
  /// that receive `codec` (kVP8: the VP8 encode; kH264: the main H.264 encode); 0 = leave it alone.
  virtual std::uint32_t targetBitrateKbps(Codec codec) const = 0;
  std::uint32_t targetBitrateKbps() const { return targetBitrateKbps(Codec::kH264); }
  virtual StreamBitrate bitrate(Codec codec) const = 0;
  StreamBitrate bitrate() const { return bitrate(Codec::kH264); }
  /// With a ladder: per rung (rung 0 first), the moves of this stream's viewers onto it so far (each at
  /// the rung's keyframe), ended viewers' included; empty without a ladder.
  virtual std::vector<std::uint64_t> rungSwitches() const { return {}; }
  /// The same for its VP8 viewers, where the ladder's rungs are made in VP8 too (SinkSetup::vp8Ladder).
  virtual std::vector<std::uint64_t> vp8RungSwitches() const { return {}; }
  /// Non-blocking fan-out of one Opus packet (deliver() of a unit of Codec::kOpus is the same) to every
  /// connected viewer whose offer had an Opus audio section: `bytes` is one Opus packet (48 kHz),
  /// `ptsNs` the CLOCK_MONOTONIC capture instant of its first sample (the clock of the video's ptsNs, so
  /// both tracks' RTP timestamps and sender reports line up). The first call makes the stream one with
  /// sound (unless StreamConfig::sound made it one from the start): offers from then on get an audio
  /// track beside the video (same MediaStream), offers without audio get video only. Null is ignored.
  virtual void publishAudio(EncodedUnitPtr opusPacket) = 0;
  /// Opus packets handed to this stream's viewers so far, and those dropped at a viewer's full queue.
  virtual StreamAudioSent audioSent() const = 0;
};

/// The WHEP server: one HTTP front (POST /whep[/NAME], the viewer page, /stats, /metrics) and the
/// streams it hands out, each a WhepStream, a UnitSink its pipeline feeds. The unnamed stream is a
/// stream like the named ones (unnamedStream()); the server itself is no sink.
class ZEROHOP_API StreamServer final {
 public:
  /// Binds the HTTP socket and starts the HTTP thread and the GStreamer main loop.
  /// Throws Error(kUnavailable) when the address is in use or cannot be bound, Error(kNotFound) when
  /// webRoot is not a directory, Error(kUnavailable) when a needed GStreamer element is missing,
  /// Error(kInvalidArgument) when maxViewers is 0 or the TLS certificate/key cannot be used.
  explicit StreamServer(StreamConfig config);
  /// Stops HTTP, ends every session and joins every thread (well under a second). Never throws.
  ~StreamServer();

  StreamServer(const StreamServer&) = delete;
  StreamServer& operator=(const StreamServer&) = delete;

  /// Provides the body of GET /stats (application/json). The provider's JSON is served as is: the
  /// server adds nothing to it, so the provider includes "viewers" (from viewerCount()) itself.
  /// Without a provider, GET /stats answers {"viewers": N}.
  void setStatsProvider(std::function<std::string()> json);

  /// Body of GET /metrics (Prometheus text exposition format 0.0.4). Without one, /metrics is 404.
  void setMetricsProvider(std::function<std::string()> text);

  /// Adds the stream POST /whep/NAME plays (its viewers count towards maxViewers). Before the first
  /// viewer is wise but not required. Throws Error(kInvalidArgument) for a name taken already, or one
  /// that is empty or not of [A-Za-z0-9_-] (it is a URL path segment).
  std::shared_ptr<WhepStream> addStream(const std::string& name);
  /// The stream POST /whep plays (without StreamConfig::defaultStream): a server with one stream (a
  /// FrameStream's, a test's) feeds it as CameraServer feeds each camera's named stream. Its name() is
  /// empty. The same stream on every call; it must not outlive this server.
  std::shared_ptr<WhepStream> unnamedStream();

  /// Opus packets handed to viewers (of every stream) so far, and those dropped at a viewer's full queue.
  StreamAudioSent audioSent() const;
  /// Sessions that exist now (negotiating or connected), of every stream.
  std::size_t viewerCount() const;
  /// The start-up times and feedback of the sessions that exist now, of every stream, oldest first.
  std::vector<ViewerStats> viewerStats() const;
  /// The bound TCP port (the kernel's choice when StreamConfig::port was 0).
  std::uint16_t port() const;
  /// "http://<host>:<port>/", e.g. "http://127.0.0.1:8080/"; "https://..." with TLS.
  std::string url() const;

 private:
  class Impl;
  std::unique_ptr<Impl> impl_;
};

/// A UnitSink that publishes the stream to a WHIP endpoint, http[s]://HOST[:PORT]/PATH (`serve
/// --whip`): webrtcbin offers, the endpoint answers; reconnects with back-off when the endpoint goes
/// away, and DELETEs its resource when destroyed (docs/stream.md, "WHIP"). `token` non-empty: sent as
/// `Authorization: Bearer <token>`. Throws Error(kInvalidArgument) for a malformed URL.
/// `ice`: its iceServers / turnSecret / turnCredentialSeconds give the WHIP session's webrtcbin its
/// STUN/TURN servers, as they do the WHEP viewers' (`serve --ice-server`, `--turn-secret`); a malformed
/// one throws Error(kInvalidArgument) here. `ice.sound`: the stream has sound, so the offer has an Opus
/// section beside the video and the sink's deliver() sends Opus units. The rest of `ice` is unused.
ZEROHOP_API std::unique_ptr<UnitSink> makeWhipSink(const std::string& url, const std::string& token = {},
                                                   const StreamConfig& ice = {});
/// As above; `simulcast`: the offer sends the camera's ladder of renditions (SinkSetup::ladder, its first
/// three rungs, full size first) as RFC 8853 simulcast layers with rids "h", "m", "l" in the one video
/// section, for an SFU (Janus, LiveKit, MediaMTX) to give each of its viewers the layer its link carries;
/// the layers the endpoint's answer takes are encoded and sent (an answer without simulcast: rung 0
/// alone). Each layer's keyframe requests reach its own encode. Without a ladder: one layer, said in the
/// log (docs/stream.md, "Simulcast over WHIP").
ZEROHOP_API std::unique_ptr<UnitSink> makeWhipSink(const std::string& url, const std::string& token,
                                                   const StreamConfig& ice, bool simulcast);

/// A UnitSink that sends the stream as RTP H.264 to a Janus streaming-plugin mountpoint or any RTP
/// receiver (`serve --janus`; docs/stream.md, "Janus"): "HOST:PORT?mountpoint=ID[&secret=S]" (Janus's
/// HTTP API is asked for the mountpoint's ports; Error if it cannot be) or "HOST:PORT[?rtcp=PORT&pt=N]"
/// (the video port; RTCP, default PORT+1, carries the receiver's keyframe requests back).
ZEROHOP_API std::unique_ptr<UnitSink> makeRtpSink(const std::string& target);

}  // namespace zerohop
