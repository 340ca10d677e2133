#include "keyframe_waits.hpp"

#include <algorithm>

#include "core/latency_stats.hpp"

namespace zerohop {

void KeyframeWaits::keep(std::vector<double>& ring, std::size_t& next, std::size_t window, double ms) {
  if (ring.size() < window) {
    ring.push_back(ms);
  } else {
    ring[next] = ms;
  }
  next = (next + 1) % window;
}

void KeyframeWaits::recordWait(double ms) {
  keep(waitsMs_, nextWait_, window_, ms);
  maxMs_ = std::max(maxMs_, ms);
  sumMs_ += ms;
  ++count_;
}

void KeyframeWaits::unhonoured(std::int64_t requestedNs) {
  std::lock_guard lock(mutex_);
  if (waitingSinceNs_ != 0) return;  // it joins the running wait
  if (lastKeyframeNs_ != 0 && lastKeyframeNs_ >= requestedNs) {
    recordWait(static_cast<double>(lastKeyframeNs_ - requestedNs) / 1e6);  // already answered
    return;
  }
  waitingSinceNs_ = requestedNs;
}

void KeyframeWaits::keyframeSent(std::int64_t nowNs) {
  std::lock_guard lock(mutex_);
  if (waitingSinceNs_ != 0) {
    recordWait(static_cast<double>(nowNs - waitingSinceNs_) / 1e6);
    waitingSinceNs_ = 0;
  }
  if (lastKeyframeNs_ != 0)
    keep(intervalsMs_, nextInterval_, window_, static_cast<double>(nowNs - lastKeyframeNs_) / 1e6);
  lastKeyframeNs_ = nowNs;
}

KeyframeWaitStatus KeyframeWaits::status() const {
  std::lock_guard lock(mutex_);
  KeyframeWaitStatus s;
  s.wait = percentiles(waitsMs_);
  s.maxMs = maxMs_;
  s.count = count_;
  s.sumMs = sumMs_;
  s.idrInterval = percentiles(intervalsMs_);
  return s;
}

}  // namespace zerohop
