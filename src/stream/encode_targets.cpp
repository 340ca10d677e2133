#include "stream/encode_targets.hpp"

#include <algorithm>

namespace zerohop::stream {

std::vector<std::uint32_t> followedEstimates(const std::vector<ViewerEstimate>& sharing) {
  const bool anyNack =
      std::any_of(sharing.begin(), sharing.end(), [](const ViewerEstimate& v) { return v.nackNegotiated; });
  std::vector<std::uint32_t> followed;
  for (const ViewerEstimate& v : sharing) {
    if (v.nackNegotiated || !anyNack) followed.push_back(v.kbps);
  }
  return followed;
}

void EncodeTargets::update(std::int64_t nowNs, const std::vector<ViewerEstimate>& viewers) {
  std::vector<ViewerEstimate> h264Viewers, vp8Viewers;
  for (const ViewerEstimate& v : viewers) {
    if (v.codec == Codec::kH264) h264Viewers.push_back(v);
    if (v.codec == Codec::kVP8) vp8Viewers.push_back(v);
  }
  const std::vector<std::uint32_t> h264 = followedEstimates(h264Viewers), vp8 = followedEstimates(vp8Viewers);
  h264_.update(nowNs, h264);
  vp8_.update(nowNs, vp8);
  h264Count_ = h264.size();
  vp8Count_ = vp8.size();
}

void EncodeTargets::setLimits(BitrateLimits limits) {
  h264_.setLimits(limits);
  vp8_.setLimits(limits);
}

}  // namespace zerohop::stream
