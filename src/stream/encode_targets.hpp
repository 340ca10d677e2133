#pragma once
// One stream's encode targets, one per codec (docs/stream.md, "Congestion control"): the H.264 encode
// (every viewer whose offer has H.264) and the VP8 encode (viewers without usable H.264, e.g. Firefox
// ESR) are separate encodes, so each follows the weakest viewer of its own codec (EncodeTarget): a VP8
// viewer on a slow link lowers the VP8 encode and never the H.264 one, and the other way round. A codec
// with no viewer that counts rises towards the maximum (at EncodeTarget's pace), so the next viewer of
// it starts near the maximum, as the H.264 encode always did. Both share the stream's limits.
// A viewer whose loss claims serve cannot check (it negotiated no NACK: followedEstimates) lowers an
// encode only while no viewer with NACK shares it: a peer that lies about its loss can then lower only
// what no checkable viewer receives.
// Pure: time comes with the update. Thread-safety: thread-bound (the caller serialises).

#include <cstdint>
#include <vector>

#include "stream/bitrate_controller.hpp"
#include "zerohop/codec.hpp"

namespace zerohop::stream {

/// One viewer that counts (connected, feedback seen): the codec it receives, its estimate, and whether it
/// negotiated NACK (a=rtcp-fb nack: the loss its receiver reports claim is capped by what it NACKs,
/// creditedReportLoss).
struct ViewerEstimate {
  Codec codec = Codec::kH264;
  std::uint32_t kbps = 0;
  bool nackNegotiated = true;
};

/// The estimates one shared encode follows, of the viewers `sharing` it: those that negotiated NACK when
/// there is one, else all. A viewer without NACK is believed whatever loss it claims (nothing to hold its
/// receiver reports to: a hostile one claiming 50 % drove the encode to --min-bitrate, the honest viewer to
/// 28 % of its bitrate), so it cannot pull the encode below what the NACK viewers' feedback supports. It
/// still lowers an encode it shares only with its own kind (its own picture: a viewer alone, GStreamer
/// receivers without NACK), and with renditions its estimate still places it on a rung of its own. Pure.
std::vector<std::uint32_t> followedEstimates(const std::vector<ViewerEstimate>& sharing);

class EncodeTargets {
 public:
  /// Both targets start at the maximum.
  explicit EncodeTargets(BitrateLimits limits) : h264_(limits), vp8_(limits) {}

  /// Each codec's target from the estimates of its own viewers (followedEstimates; a codec other than
  /// H.264 and VP8 counts for none). Returns nothing; read targetKbps().
  void update(std::int64_t nowNs, const std::vector<ViewerEstimate>& viewers);
  /// kVP8: the VP8 encode's target; any other codec: the H.264 encode's.
  std::uint32_t targetKbps(Codec codec) const { return of(codec).targetKbps(); }
  /// Viewers of `codec` the last update followed.
  std::size_t viewersCounted(Codec codec) const { return codec == Codec::kVP8 ? vp8Count_ : h264Count_; }
  const BitrateLimits& limits() const { return h264_.limits(); }
  void setLimits(BitrateLimits limits);

 private:
  const EncodeTarget& of(Codec codec) const { return codec == Codec::kVP8 ? vp8_ : h264_; }

  EncodeTarget h264_, vp8_;
  std::size_t h264Count_ = 0, vp8Count_ = 0;
};

}  // namespace zerohop::stream
