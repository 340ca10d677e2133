#pragma once
// One encoded unit of one track (an H.264 access unit, a VP8 frame, an Opus packet), shared read-only
// between every consumer of its encode (each WebRTC viewer, a recorder, the share ring) as
// std::shared_ptr<const EncodedUnit>.
// Thread-safety: immutable once published; safe to read from any thread.

#include <cstdint>
#include <memory>
#include <vector>

#include "zerohop/codec.hpp"
#include "zerohop/frame.hpp"

namespace zerohop {

struct EncodedUnit {
  Codec codec = Codec::kH264;
  std::uint32_t width = 0;  ///< the picture's (0 for sound)
  std::uint32_t height = 0;
  std::vector<std::uint8_t> bytes;  ///< H.264: Annex B, start codes included, SPS/PPS before every IDR
  bool keyframe = false;
  std::uint64_t sequence = 0;   ///< source frame sequence
  std::int64_t wallClockMs = 0;
  std::int64_t ptsNs = 0;        ///< presentation time: CLOCK_MONOTONIC capture time
  StageTimes times{};
  /// The rung of the camera's ladder this unit is of (zerohop/sinks.hpp, Rendition): 0 = the main encode.
  std::uint8_t rendition = 0;

  MediaKind kind() const noexcept { return mediaKindOf(codec); }
  TrackKey track() const noexcept { return {codec, rendition}; }
};

using EncodedUnitPtr = std::shared_ptr<const EncodedUnit>;

}  // namespace zerohop
