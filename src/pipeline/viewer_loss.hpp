#pragma once
// The worst loss a stream's viewers report: what the sound's in-band FEC is set for
// (audio::AudioTrack::setLossProbe). Thread-safety: pure, reentrant.
#include <algorithm>
#include <vector>

#include "zerohop/stream_server.hpp"

namespace zerohop {

/// The highest ViewerStats::lossPercent, or -1 when no viewer reported any.
inline double worstViewerLossPercent(const std::vector<ViewerStats>& viewers) {
  double worst = -1;
  for (const ViewerStats& v : viewers) worst = std::max(worst, v.lossPercent);
  return worst;
}

}  // namespace zerohop
