#pragma once
// One IP camera's RTSP connection, shared by its picture (RtspSource) and its sound (RtspAudioSource
// beside the picture, `audio = "rtsp"`): the camera sees ONE RTSP session carrying both streams (cameras
// allow few sessions and each costs them).
//
//   RtspAudioSource (beside)         RtspConnection (found by the camera's URL)       RtspSource
//     forSound(url) ---------------> sound attached ------------------------------------ forPicture(url)
//     awaitSession(gen) <----------- open(): RtspSession{video, audio: sound attached} <- (re)connects,
//                                    close(session, why): stops it; both see `why`         back-off
//
// The picture drives the connection: it opens it, drops it on a fault or a stall and reconnects with
// back-off (RtspPolicy); the sound follows, taking each new session's audio. The sound attaches first
// (CameraServer opens it before the camera's pipeline), so the picture's sessions carry the audio stream
// from the first one. A second picture of the same URL (two cameras naming one stream) gets a connection
// of its own.
// Thread-safety: thread-safe. Ownership: shared by the sources that attached; the registry holds it weakly.

#include <condition_variable>
#include <cstdint>
#include <memory>
#include <mutex>

#include "rtsp/rtsp_session.hpp"
#include "rtsp/rtsp_url.hpp"

namespace zerohop::rtsp {

class RtspConnection {
 public:
  /// The connection of the camera at `url` for its picture: the one its sound attached to, else a new one.
  static std::shared_ptr<RtspConnection> forPicture(const RtspUrl& url);
  /// The connection of the camera at `url` for its sound: the one its picture attached to, else a new one.
  static std::shared_ptr<RtspConnection> forSound(const RtspUrl& url);

  explicit RtspConnection(RtspUrl url) : url_(std::move(url)) {}
  ~RtspConnection();
  RtspConnection(const RtspConnection&) = delete;
  RtspConnection& operator=(const RtspConnection&) = delete;

  /// The picture's: a new session (the previous one stopped) with the picture and, while a sound is
  /// attached, the sound. Throws Error like RtspSession's constructor.
  std::shared_ptr<RtspSession> open();
  /// The picture's: stops `session` if it is the current one; the sound's waitAudio() returns `why`.
  void close(const std::shared_ptr<RtspSession>& session, const SessionFailure& why);
  /// The picture's source is gone (its session closed): a later picture may attach.
  void releasePicture();
  /// The sound's source is gone: later sessions carry the picture only.
  void releaseSound();

  /// The sound's: the current session if it is newer than `generation` (which is set to it), else waits
  /// for one until `deadlineMonotonicNs`; nullptr then.
  std::shared_ptr<RtspSession> awaitSession(std::uint64_t& generation, std::int64_t deadlineMonotonicNs);

 private:
  static std::shared_ptr<RtspConnection> attach(const RtspUrl& url, bool picture);

  const RtspUrl url_;
  std::mutex mutex_;
  std::condition_variable changed_;
  std::shared_ptr<RtspSession> session_;
  std::uint64_t generation_ = 0;
  bool picture_ = false;
  bool sound_ = false;
};

}  // namespace zerohop::rtsp
