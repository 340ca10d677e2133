#pragma once
// One viewer's keyframe requests on their way to the shared encode: its RTCP PLI/FIR (at most one
// forced keyframe a second: keyframe_request_limit.hpp; one inside the gap is deferred and served by the
// next unit pushed once the gap has passed, unless a keyframe reached the viewer meanwhile) and its own
// "fell behind" (always forwarded). After close() nothing is forwarded: the session that owns it is
// going away while GStreamer's streaming thread may still hold the probe that calls onViewerRequest(),
// so that probe shares this object (a shared_ptr), never the session. Every call takes the one lock, so
// the owner's close() after its pipeline stopped orders the probe's last call before the free.
// Pure: no GStreamer; time comes in with each call (CLOCK_MONOTONIC ns). Thread-safety: thread-safe;
// `forward` runs under the lock (it must not call back into this object).

#include <cstdint>
#include <functional>
#include <mutex>
#include <string>
#include <utility>

#include "stream/keyframe_request_limit.hpp"

namespace zerohop::stream {

class ViewerKeyframeRequests {
 public:
  /// `label` names the viewer in log lines; `forward` asks the encode for a keyframe.
  ViewerKeyframeRequests(std::string label, std::function<void()> forward)
      : label_(std::move(label)), forward_(std::move(forward)) {}

  /// The viewer's PLI/FIR at `nowNs`. True when forwarded now; false when held back (deferred) or closed.
  bool onViewerRequest(std::int64_t nowNs);
  /// A unit is about to go to the viewer: a keyframe clears a deferred request, a delta unit forwards it
  /// once the limit allows. True when a deferred request was forwarded.
  bool onUnit(bool keyframe, std::int64_t nowNs);
  /// The viewer fell behind (its queue overflowed): forwarded whatever the limit says, unless closed.
  void onFellBehind();
  /// No forwarding from now on; also orders every earlier call before the caller's next step.
  void close();

  bool deferred() const;
  std::uint64_t forwarded() const { return limit_.allowed(); }
  std::uint64_t refused() const { return limit_.refused(); }

 private:
  void forwardLocked();

  const std::string label_;
  mutable std::mutex mutex_;
  std::function<void()> forward_;  // empty once closed
  KeyframeRequestLimit limit_;
  bool deferred_ = false;  // a PLI/FIR held back by limit_, not yet served
};

}  // namespace zerohop::stream
