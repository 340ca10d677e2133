#include "stream/encode_targets.hpp"

namespace zerohop::stream {

void EncodeTargets::update(std::int64_t nowNs, const std::vector<ViewerEstimate>& viewers) {
  std::vector<std::uint32_t> h264, vp8;
  for (const ViewerEstimate& v : viewers) {
    if (v.codec == PixelFormat::kH264) h264.push_back(v.kbps);
    if (v.codec == PixelFormat::kVP8) vp8.push_back(v.kbps);
  }
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
