#include "stream/viewer_liveness.hpp"

#include <algorithm>

namespace zerohop::stream {

bool ViewerLiveness::noteConnected(std::int64_t nowNs) {
  std::lock_guard lock(mutex_);
  disconnectedSinceNs_ = 0;
  if (connectedNs_ != 0) return false;
  connectedNs_ = nowNs;
  return true;
}

bool ViewerLiveness::noteDisconnected(bool disconnected, std::int64_t nowNs) {
  std::lock_guard lock(mutex_);
  if (!disconnected) {
    disconnectedSinceNs_ = 0;
    return false;
  }
  if (disconnectedSinceNs_ != 0) return false;
  disconnectedSinceNs_ = nowNs;
  return true;
}

void ViewerLiveness::noteReport(std::uint32_t ssrc, std::int64_t nowNs) {
  std::lock_guard lock(mutex_);
  if (std::find(viewerSsrcs_.begin(), viewerSsrcs_.end(), ssrc) == viewerSsrcs_.end() &&
      viewerSsrcs_.size() < kMaxViewerSsrcs)
    viewerSsrcs_.push_back(ssrc);
  if (lastRtcpNs_ != 0 && nowNs - lastRtcpNs_ > longestRtcpGapNs_) longestRtcpGapNs_ = nowNs - lastRtcpNs_;
  lastRtcpNs_ = nowNs;
}

std::vector<std::uint32_t> ViewerLiveness::viewerSsrcs() const {
  std::lock_guard lock(mutex_);
  return viewerSsrcs_;
}

bool ViewerLiveness::isViewerSsrc(std::uint32_t ssrc) const {
  std::lock_guard lock(mutex_);
  return std::find(viewerSsrcs_.begin(), viewerSsrcs_.end(), ssrc) != viewerSsrcs_.end();
}

std::int64_t ViewerLiveness::connectedNs() const {
  std::lock_guard lock(mutex_);
  return connectedNs_;
}

std::string ViewerLiveness::goneReason(std::int64_t nowNs) const {
  using std::chrono::nanoseconds;
  std::lock_guard lock(mutex_);
  if (disconnectedSinceNs_ != 0 && nanoseconds(nowNs - disconnectedSinceNs_) > kDisconnectGrace) {
    return "disconnected for more than " + std::to_string(kDisconnectGrace.count()) + " s";
  }
  if (connectedNs_ == 0) return {};  // not connected yet: the owner's connect timeout applies
  // Before the first report, the longest silence any receiver may keep.
  const nanoseconds allowed = lastRtcpNs_ == 0 ? nanoseconds(kRtcpSilenceMax)
                                               : std::clamp(nanoseconds(4 * longestRtcpGapNs_),
                                                            nanoseconds(kRtcpSilence), nanoseconds(kRtcpSilenceMax));
  const nanoseconds silent(nowNs - std::max(connectedNs_, lastRtcpNs_));
  if (silent > allowed) {
    return "no RTCP from the viewer for " +
           std::to_string(std::chrono::duration_cast<std::chrono::milliseconds>(silent).count()) +
           " ms, its reports had come at most " + std::to_string(longestRtcpGapNs_ / 1000000) +
           " ms apart (it vanished)";
  }
  return {};
}

}  // namespace zerohop::stream
