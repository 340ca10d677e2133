#pragma once
// WhipPublisher: sends the one encoded stream to a WHIP endpoint (`serve --whip URL`), as a standard
// WHIP client (draft-ietf-wish-whip): POST the SDP offer (Content-Type application/sdp, optional
// `Authorization: Bearer`), expect 201 Created with the answer and a Location naming the session
// resource, DELETE that resource when the session ends or the publisher stops. Non-trickle: the
// offer carries every ICE candidate, so no PATCH is sent.
//
// The WebRTC side is a ViewerSession (appsrc -> rtph264pay -> webrtcbin) driven as the offerer: the
// same gating (nothing until a keyframe), overflow policy and keyframe requests (join, RTCP PLI/FIR)
// as a WHEP viewer.
//
//   worker thread:  offer -> POST -> 201 + answer -> connected ... ended (ICE/DTLS failed, RTCP BYE or
//                   timeout, pipeline error) -> DELETE -> wait back-off -> offer -> ...
// Back-off: 0.5 s after the first failure, doubling to 10 s; back to 0.5 s once a session connected.
// A session that has not connected 15 s after the answer counts as failed.
// Thread-safety: thread-safe (push() from the encode thread, everything else internal). Owns one
// worker thread; the destructor stops it, ends the session and DELETEs the resource (bounded, ~2 s).

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>

#include "stream/whip_url.hpp"
#include "zerohop/encoded_unit.hpp"

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
  };

  /// Starts the worker (the first attempt happens at once). `onKeyframeRequest` is called on any
  /// thread when the endpoint connects or asks for a keyframe; `loop` runs GStreamer latency
  /// work and must outlive this object. Throws Error(kInvalidArgument) for a malformed URL.
  WhipPublisher(Options options, std::function<void()> onKeyframeRequest, GlibLoopThread& loop);
  ~WhipPublisher();
  WhipPublisher(const WhipPublisher&) = delete;
  WhipPublisher& operator=(const WhipPublisher&) = delete;

  /// Non-blocking: hands the unit to the current session, if one is connected.
  void push(const EncodedUnitPtr& unit);

  bool connected() const { return connected_.load(); }
  /// Sessions that reached "connected" so far (1 after the first, 2 after one reconnect, ...).
  std::uint64_t sessionsConnected() const { return sessionsConnected_.load(); }

 private:
  void run();
  /// One session, from offer to its end; true when it connected.
  bool publishOnce(unsigned attempt);
  void deleteResource(const HttpUrl& resource);
  /// Waits `d` or until stopping; false when stopping.
  bool sleepUnlessStopping(std::chrono::milliseconds d);

  const Options options_;
  const HttpUrl endpoint_;
  const std::function<void()> onKeyframeRequest_;
  GlibLoopThread& loop_;

  std::mutex sessionMutex_;  // guards session_ (push() runs under it)
  std::shared_ptr<ViewerSession> session_;

  std::mutex stateMutex_;  // guards the fields below; never held while calling into a session
  std::condition_variable stateCv_;
  bool stopping_ = false;
  bool sessionEnded_ = false;
  std::string endReason_;
  std::atomic<bool> connected_{false};
  std::atomic<std::uint64_t> sessionsConnected_{0};

  std::thread worker_;
};

}  // namespace zerohop::stream
