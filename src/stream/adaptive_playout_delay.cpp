#include "stream/adaptive_playout_delay.hpp"

#include <algorithm>
#include <cmath>

namespace zerohop::stream {

PlayoutDelay AdaptivePlayoutDelay::update(std::int64_t nowNs, std::uint64_t retransmitted, double rttMs) {
  if (rttMs > 0) rttMs_ = rttMs;
  const bool repaired = retransmitted > lastRetransmitted_;
  lastRetransmitted_ = retransmitted;
  if (repaired && rttMs_ >= kRepairRttMs) {
    lastRepairNs_ = nowNs;
    const int wantMs = static_cast<int>(std::ceil((kRttFactor * rttMs_ + kMarginMs) / kPlayoutDelayUnitMs)) *
                       kPlayoutDelayUnitMs;
    const int minMs = std::clamp(wantMs, configured_.minMs, std::max(configured_.minMs, kCeilingMs));
    // Raise at once; never lower while repairs go on (a smaller RTT reading must not shave the margin).
    if (minMs > current_.minMs) current_ = {minMs, std::max({configured_.maxMs, 2 * minMs, current_.maxMs})};
  } else if (raised() &&
             (nowNs - lastRepairNs_ >= kHoldNs || (rttMs_ > 0 && rttMs_ < kRelease * kRepairRttMs))) {
    current_ = back();
  }
  return current_;
}

}  // namespace zerohop::stream
