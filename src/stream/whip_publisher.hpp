#pragma once
// WhipPublisher: sends the one encoded stream to a WHIP endpoint (`serve --whip URL`), as a standard
// WHIP client (draft-ietf-wish-whip): POST the SDP offer (Content-Type application/sdp, optional
// `Authorization: Bearer`), expect 201 Created with the answer and a Location naming the session
// resource, DELETE that resource when the session ends or the publisher stops. Non-trickle: the
// offer carries every ICE candidate, so no PATCH is sent. ICE servers: the configured ones
// (Options::iceServers) and those the endpoint names in rel="ice-server" Link headers (RFC 9725 §4.6)
// of an OPTIONS asked before each offer; a 201's serve the next session (the offer was gathered).
//
// The WebRTC side is a ViewerSession (appsrc -> rtph264pay -> webrtcbin) driven as the offerer: the
// same gating (nothing until a keyframe), overflow policy and keyframe requests (join, RTCP PLI/FIR)
// as a WHEP viewer.
//
//   worker thread:  offer -> POST -> 201 + answer -> connected ... ended (ICE/DTLS failed, RTCP BYE or
//                   timeout, pipeline error) -> DELETE -> wait back-off -> offer -> ...
// Back-off: 0.5 s after the first failure, doubling to 10 s; back to 0.5 s once a session connected.
// A session that has not connected 15 s after the answer counts as failed.
// A hostile or broken endpoint harms only this publisher (docs/reliability.md, "Hostile peers"): the
// bearer token goes to the origin of `url` only (a 307/308 to another origin is followed without it,
// and logged; the resource's DELETE too); each exchange is bounded as a whole (5 s for the POST,
// connect, headers and body; 1.5 s for OPTIONS and DELETE), so an answer trickled a byte a second ends
// with a line that says so; a body over 256 KB is refused as it arrives; an answer without an open video
// section that receives our H.264 is refused, saying what it had.
// Thread-safety: thread-safe (push() from the encode thread, everything else internal). Owns one
// worker thread (and, during each HTTP exchange, a watchdog thread that bounds it); the destructor
// cuts an exchange in progress short, stops the worker, ends the session and DELETEs the resource
// (bounded: 1.5 s).

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "stream/ice_servers.hpp"
#include "stream/whip_url.hpp"
#include "zerohop/encoded_unit.hpp"

namespace httplib {
struct Response;
}

namespace zerohop::stream {

class GlibLoopThread;
class ViewerSession;

class WhipPublisher {
 public:
  struct Options {
    std::string url;    ///< the WHIP endpoint, http[s]://HOST[:PORT]/PATH
    std::string token;  ///< non-empty: `Authorization: Bearer <token>` on every request
    std::chrono::milliseconds minBackoff{500};
    std::chrono::milliseconds maxBackoff{10000};
    std::chrono::milliseconds connectTimeout{15000};
    /// `serve --ice-server` / `--turn-secret`: STUN/TURN servers every session's webrtcbin gets before
    /// its offer (credentials from the secret made afresh for each session), as the WHEP viewers do.
    IceServers iceServers;
    /// The stream has sound: the offer has an Opus section beside the video (sendonly, one MediaStream),
    /// and pushAudio() sends the packets (an endpoint that rejects the audio section gets video only).
    bool sound = false;
    /// > 1: simulcast (RFC 8853) of this many layers, layer i being rung i of the camera's ladder (full
    /// size first), each its own SSRC with rid "h", "m", "l" (simulcast_sdp.hpp) in the one video section;
    /// the answer's a=simulcast:recv says which layers the endpoint takes, and only those are sent
    /// (takesRung()). An endpoint that answers without simulcast gets the first layer alone.
    std::size_t simulcastLayers = 0;
    /// Simulcast: the endpoint asked for a keyframe of layer N (PLI/FIR about its SSRC), or layer N >= 1
    /// fell behind; called on any thread. Layer 0's queue overflow comes as `onKeyframeRequest`.
    std::function<void(std::size_t layer)> onLayerKeyframeRequest;
  };

  /// Starts the worker (the first attempt happens at once). `onKeyframeRequest` is called on any
  /// thread when the endpoint connects or asks for a keyframe; `loop` runs GStreamer latency
  /// work and must outlive this object. Throws Error(kInvalidArgument) for a malformed URL.
  WhipPublisher(Options options, std::function<void()> onKeyframeRequest, GlibLoopThread& loop);
  ~WhipPublisher();
  WhipPublisher(const WhipPublisher&) = delete;
  WhipPublisher& operator=(const WhipPublisher&) = delete;

  /// Non-blocking: hands the unit to the current session, if one is connected: rung 0's, and with
  /// simulcast each rung the endpoint takes into its own layer.
  void push(const EncodedUnitPtr& unit);
  /// Whether the current session sends rung `rung` (simulcast: the endpoint's answer took its layer;
  /// without simulcast: rung 0 only). False while no session is connected.
  bool takesRung(std::size_t rung) const {
    return rung < 32 && connected_.load() && ((rungsTaken_.load() >> rung) & 1u) != 0;
  }
  /// Non-blocking: one Opus packet of the stream's sound to the current session, if one is connected and
  /// its endpoint took the audio section (Options::sound).
  void pushAudio(const EncodedUnitPtr& unit);

  bool connected() const { return connected_.load(); }
  /// Sessions that reached "connected" so far (1 after the first, 2 after one reconnect, ...).
  std::uint64_t sessionsConnected() const { return sessionsConnected_.load(); }
  /// The STUN/TURN servers (webrtcbin URLs, credentials included) the latest session was given: the
  /// configured ones, then the endpoint's (its OPTIONS, or its previous 201; docs/stream.md, "WHIP").
  SessionIceServers lastSessionIce() const;

 private:
  void run();
  /// One session, from offer to its end; true when it connected.
  bool publishOnce(unsigned attempt);
  void deleteResource(const HttpUrl& resource);
  /// One request (`sdp`, when not empty, as its application/sdp body) to `url`, bounded: the whole
  /// exchange within `limit`, a body of at most 256 KB; the bearer token only when `url` is on the
  /// endpoint's origin. `stopWithPublisher`: the destructor cuts it short. The response's body is read
  /// into Response::body. Throws Error: kTimeout (past `limit`), kProtocol (body too large),
  /// kUnavailable (no answer, or cut short by stopping).
  httplib::Response exchange(const std::string& method, const HttpUrl& url, const std::string& sdp,
                             std::chrono::milliseconds limit, bool stopWithPublisher);
  /// OPTIONS on the endpoint before the offer: its rel="ice-server" Link headers, if any, for this session.
  void preflightEndpointIce();
  /// Keeps the rel="ice-server" Link headers of an OPTIONS or 201 answer for the session to come
  /// (logged when they change).
  void rememberEndpointIce(const httplib::Response& res, const char* answered);
  /// Simulcast: the rungs the endpoint's answer takes (bit N: layer N, rid rids[N]), said in the log;
  /// rung 0 alone when it takes none.
  std::uint32_t simulcastLayersTaken(const std::string& answer, const std::vector<std::string>& rids) const;
  /// Waits `d` or until stopping; false when stopping.
  bool sleepUnlessStopping(std::chrono::milliseconds d);

  const Options options_;
  const HttpUrl endpoint_;
  const std::function<void()> onKeyframeRequest_;
  GlibLoopThread& loop_;

  std::mutex sessionMutex_;  // guards session_ (push() runs under it)
  std::shared_ptr<ViewerSession> session_;

  mutable std::mutex iceMutex_;       // guards the two below
  SessionIceServers endpointIce_;     // from the Link headers of the endpoint's last 201
  SessionIceServers lastSessionIce_;  // what the latest session's webrtcbin was given

  std::mutex stateMutex_;  // guards the fields below; never held while calling into a session
  std::condition_variable stateCv_;
  bool stopping_ = false;
  bool sessionEnded_ = false;
  std::string endReason_;
  std::atomic<bool> connected_{false};
  std::atomic<std::uint64_t> sessionsConnected_{0};
  std::atomic<std::uint32_t> rungsTaken_{1};  // bit N: the current session sends rung N

  std::thread worker_;
};

}  // namespace zerohop::stream
