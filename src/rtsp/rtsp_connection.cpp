// RtspConnection (rtsp_connection.hpp): a camera's picture and sound over one RTSP session.
#include "rtsp/rtsp_connection.hpp"

#include <algorithm>
#include <chrono>
#include <map>
#include <string>

#include "zerohop/clock.hpp"

namespace zerohop::rtsp {
namespace {

// The connections a source holds, by everything that makes two URLs the same session to the camera.
std::string keyOf(const RtspUrl& url) {
  return url.location() + '\n' + url.user + '\n' + url.password + '\n' + url.protocols + '\n' +
         std::to_string(url.latencyMs);
}

std::mutex& registryMutex() {
  static std::mutex m;
  return m;
}

std::map<std::string, std::weak_ptr<RtspConnection>>& registry() {
  static std::map<std::string, std::weak_ptr<RtspConnection>> r;
  return r;
}

}  // namespace

std::shared_ptr<RtspConnection> RtspConnection::attach(const RtspUrl& url, bool picture) {
  std::lock_guard lock(registryMutex());
  auto& slot = registry()[keyOf(url)];
  if (auto found = slot.lock()) {
    std::lock_guard own(found->mutex_);
    bool& taken = picture ? found->picture_ : found->sound_;
    if (!taken) {
      taken = true;
      return found;
    }
    // Taken (two cameras of one URL): a connection of its own, not registered.
    auto separate = std::make_shared<RtspConnection>(url);
    (picture ? separate->picture_ : separate->sound_) = true;
    return separate;
  }
  auto made = std::make_shared<RtspConnection>(url);
  (picture ? made->picture_ : made->sound_) = true;
  slot = made;
  return made;
}

std::shared_ptr<RtspConnection> RtspConnection::forPicture(const RtspUrl& url) {
  return attach(url, true);
}
std::shared_ptr<RtspConnection> RtspConnection::forSound(const RtspUrl& url) {
  return attach(url, false);
}

RtspConnection::~RtspConnection() {
  std::lock_guard lock(registryMutex());
  auto it = registry().find(keyOf(url_));
  if (it != registry().end() && it->second.expired()) registry().erase(it);
}

std::shared_ptr<RtspSession> RtspConnection::open() {
  std::shared_ptr<RtspSession> previous;
  bool sound = false;
  {
    std::lock_guard lock(mutex_);
    previous = std::move(session_);
    sound = sound_;
  }
  if (previous) previous->stop({FailureKind::kEnded, "the camera's connection was replaced"});
  // Built outside the lock (it starts GStreamer's threads); the picture is the only caller of open().
  auto made = std::make_shared<RtspSession>(url_, SessionStreams{true, sound});
  {
    std::lock_guard lock(mutex_);
    session_ = made;
    ++generation_;
    changed_.notify_all();
  }
  return made;
}

void RtspConnection::close(const std::shared_ptr<RtspSession>& session, const SessionFailure& why) {
  if (!session) return;
  {
    std::lock_guard lock(mutex_);
    if (session_ == session) session_.reset();
  }
  session->stop(why);  // the sound's wait, if it holds the session, returns `why`
}

void RtspConnection::releasePicture() {
  std::shared_ptr<RtspSession> current;
  {
    std::lock_guard lock(mutex_);
    picture_ = false;
    current = std::move(session_);
  }
  if (current) current->stop({FailureKind::kEnded, "the camera's picture was closed"});
}

void RtspConnection::releaseSound() {
  std::lock_guard lock(mutex_);
  sound_ = false;
}

std::shared_ptr<RtspSession> RtspConnection::awaitSession(std::uint64_t& generation,
                                                          std::int64_t deadlineMonotonicNs) {
  std::unique_lock lock(mutex_);
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::nanoseconds(std::max<std::int64_t>(
                                                               0, deadlineMonotonicNs - monotonicNs()));
  changed_.wait_until(lock, deadline, [&] { return session_ && generation_ != generation; });
  if (!session_ || generation_ == generation) return nullptr;
  generation = generation_;
  return session_;
}

}  // namespace zerohop::rtsp
