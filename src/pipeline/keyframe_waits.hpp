#pragma once
// How long viewers wait for a keyframe the source cannot be asked for: a camera passed through without
// a keyframe control (an RTSP camera, a V4L2 H.264 camera without V4L2_CID_MPEG_VIDEO_FORCE_KEY_FRAME)
// starts a new viewer, or one that sent PLI/FIR, at its own next IDR. A wait runs from the first request
// not honoured (requests while one runs join it) to the next IDR sent; beside it, the source's IDR
// interval as sent (between consecutive IDRs), which bounds the wait. Pure: time comes in with each call.
// Thread-safety: thread-safe; unhonoured()/keyframeSent() from the encode thread, status() from any.

#include <cstddef>
#include <cstdint>
#include <mutex>
#include <vector>

#include "zerohop/pipeline.hpp"

namespace zerohop {

class KeyframeWaits {
 public:
  /// The percentiles are over the last `window` waits and intervals.
  explicit KeyframeWaits(std::size_t window = 64) : window_(window == 0 ? 1 : window) {}

  /// A keyframe request asked at `requestedNs` could not be honoured: a wait starts there, unless one runs.
  /// A request that comes due only after an IDR went out (requests are forwarded at most every 250 ms)
  /// was answered by that IDR: its wait ends there, not at the next one.
  void unhonoured(std::int64_t requestedNs);
  /// An IDR went to the sinks at `nowNs`: ends the running wait (if any) and one IDR interval.
  void keyframeSent(std::int64_t nowNs);
  KeyframeWaitStatus status() const;

 private:
  static void keep(std::vector<double>& ring, std::size_t& next, std::size_t window, double ms);
  void recordWait(double ms);  // under mutex_

  mutable std::mutex mutex_;
  std::size_t window_;
  std::int64_t waitingSinceNs_ = 0;  // 0: no wait runs
  std::int64_t lastKeyframeNs_ = 0;  // 0: no IDR sent yet
  std::vector<double> waitsMs_, intervalsMs_;
  std::size_t nextWait_ = 0, nextInterval_ = 0;
  double maxMs_ = 0;
  double sumMs_ = 0;
  std::uint64_t count_ = 0;
};

}  // namespace zerohop
