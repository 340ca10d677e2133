// WebRtcSession (zerohop/webrtc_session.hpp): a ViewerSession with a GLib loop thread of its own,
// for programs that do their own signalling.
#include "zerohop/webrtc_session.hpp"

#include <mutex>
#include <utility>

#include "stream/glib_loop_thread.hpp"
#include "stream/video_offer.hpp"
#include "stream/viewer_session.hpp"
#include "zerohop/clock.hpp"
#include "zerohop/error.hpp"

namespace zerohop {

struct WebRtcSession::Impl {
  std::mutex mutex;
  std::function<void()> keyframeRequest;
  std::function<void(const std::string&)> onEnded;
  std::string answer;
  std::string id;
  stream::GlibLoopThread loop;  // before session: the session posts onto it until it is gone
  std::shared_ptr<stream::ViewerSession> session;

  void requestKeyframe() {
    std::function<void()> request;
    {
      std::lock_guard lock(mutex);
      request = keyframeRequest;
    }
    if (request) request();
  }
};

WebRtcSession::WebRtcSession(const std::string& offerSdp, WebRtcSessionOptions options)
    : impl_(std::make_unique<Impl>()) {
  const stream::VideoChoice choice = stream::chooseH264(offerSdp);
  impl_->onEnded = std::move(options.onEnded);
  impl_->id = "session-" + std::to_string(monotonicNs());
  Impl* impl = impl_.get();
  stream::ViewerSession::Events events;
  events.onConnected = [impl] { impl->requestKeyframe(); };
  events.onKeyframeRequest = [impl] { impl->requestKeyframe(); };
  events.onEnded = [impl](const std::string& reason) {
    std::function<void(const std::string&)> ended;
    {
      std::lock_guard lock(impl->mutex);
      ended = std::exchange(impl->onEnded, nullptr);
    }
    if (ended) ended(reason);
  };
  events.post = [impl](std::function<void()> task) { impl->loop.post(std::move(task)); };
  impl_->session = std::make_shared<stream::ViewerSession>(impl_->id, choice, options.loopbackOnly, std::move(events));
  impl_->answer = impl_->session->negotiate(offerSdp, options.negotiationTimeout);
}

WebRtcSession::~WebRtcSession() {
  if (!impl_) return;
  {
    std::lock_guard lock(impl_->mutex);
    impl_->keyframeRequest = nullptr;
    impl_->onEnded = nullptr;
  }
  impl_->session.reset();  // the pipeline stops here, before its loop thread
}

const std::string& WebRtcSession::answer() const noexcept { return impl_->answer; }
bool WebRtcSession::connected() const { return impl_->session->connected(); }
std::string WebRtcSession::goneReason() const { return impl_->session->goneReason(monotonicNs()); }
void WebRtcSession::deliver(const EncodedUnitPtr& unit) {
  if (unit) impl_->session->push(unit);
}
void WebRtcSession::attach(const SinkSetup& setup) {
  std::lock_guard lock(impl_->mutex);
  impl_->keyframeRequest = setup.requestKeyframe;
}
void WebRtcSession::detach() {
  std::lock_guard lock(impl_->mutex);
  impl_->keyframeRequest = nullptr;
}
std::string WebRtcSession::describe() const {
  return std::string("WebRTC session ") + (connected() ? "(connected)" : "(negotiated)");
}

}  // namespace zerohop
