#include "stream/viewer_keyframe_requests.hpp"

#include "zerohop/log.hpp"

namespace zerohop::stream {

bool ViewerKeyframeRequests::onViewerRequest(std::int64_t nowNs) {
  std::lock_guard lock(mutex_);
  if (!forward_) return false;
  if (limit_.allow(nowNs)) {
    forwardLocked();
    return true;
  }
  deferred_ = true;
  if (limit_.refused() % 100 == 1) {
    log::debug("stream: viewer ", label_, ": ", limit_.refused(),
               " keyframe requests (PLI/FIR) held back so far: more than one a second");
  }
  return false;
}

bool ViewerKeyframeRequests::onUnit(bool keyframe, std::int64_t nowNs) {
  std::lock_guard lock(mutex_);
  if (!forward_) return false;
  if (keyframe) {
    deferred_ = false;
    return false;
  }
  if (!deferred_ || !limit_.allow(nowNs)) return false;
  deferred_ = false;
  forwardLocked();
  return true;
}

void ViewerKeyframeRequests::onFellBehind() {
  std::lock_guard lock(mutex_);
  forwardLocked();
}

void ViewerKeyframeRequests::close() {
  std::lock_guard lock(mutex_);
  forward_ = nullptr;
}

bool ViewerKeyframeRequests::deferred() const {
  std::lock_guard lock(mutex_);
  return deferred_;
}

void ViewerKeyframeRequests::forwardLocked() {
  if (forward_) forward_();
}

}  // namespace zerohop::stream
