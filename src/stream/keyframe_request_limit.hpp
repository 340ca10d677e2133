#pragma once
// How many keyframes one viewer's requests (RTCP PLI/FIR) may force on the encode it shares with every
// other viewer: at most one per kMinGapNs. A keyframe is several times the size of a delta frame and,
// at a fixed bitrate, raises every viewer's quantiser (a hostile viewer's 100 PLIs a second forced 3.7
// keyframes a second on everyone, their QP doubled). A request inside the gap is refused and counted; its
// owner (ViewerKeyframeRequests) defers it and forces one keyframe when the gap has passed, unless a keyframe
// reached the viewer meanwhile, so an honest viewer waits at most kMinGapNs for its picture. The
// pipeline's own limit (4 a second over all viewers) still applies to what passes here.
// Pure: time comes in with each call (CLOCK_MONOTONIC ns). Thread-safety: thread-safe (atomics).

#include <atomic>
#include <cstdint>
#include <limits>

namespace zerohop::stream {

class KeyframeRequestLimit {
 public:
  static constexpr std::int64_t kMinGapNs = 1'000'000'000;

  /// True when a request at `nowNs` may force a keyframe: no request of this viewer was let through in
  /// the kMinGapNs before it. False: dropped (counted in refused()).
  bool allow(std::int64_t nowNs) {
    std::int64_t last = lastNs_.load();
    while (last == kNever || nowNs - last >= kMinGapNs) {
      if (lastNs_.compare_exchange_weak(last, nowNs)) {
        allowed_.fetch_add(1);
        return true;
      }
    }
    refused_.fetch_add(1);
    return false;
  }
  std::uint64_t allowed() const { return allowed_.load(); }
  std::uint64_t refused() const { return refused_.load(); }

 private:
  static constexpr std::int64_t kNever = std::numeric_limits<std::int64_t>::min();
  std::atomic<std::int64_t> lastNs_{kNever};
  std::atomic<std::uint64_t> allowed_{0}, refused_{0};
};

}  // namespace zerohop::stream
