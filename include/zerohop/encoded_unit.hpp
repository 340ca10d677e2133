#pragma once
// One encoded access unit (H.264 Annex B), shared read-only between every consumer of one encode
// (each WebRTC viewer, a recorder, the share ring) as std::shared_ptr<const EncodedUnit>.
// Thread-safety: immutable once published; safe to read from any thread.

#include <cstdint>
#include <memory>
#include <vector>

#include "zerohop/frame.hpp"

namespace zerohop {

struct EncodedUnit {
  PixelFormat codec = PixelFormat::kH264;
  std::uint32_t width = 0;
  std::uint32_t height = 0;
  std::vector<std::uint8_t> bytes;  ///< Annex B, start codes included; SPS/PPS precede every IDR
  bool keyframe = false;
  std::uint64_t sequence = 0;   ///< source frame sequence
  std::int64_t wallClockMs = 0;
  std::int64_t ptsNs = 0;        ///< presentation time: CLOCK_MONOTONIC capture time
  StageTimes times{};
  /// The rung of the camera's ladder this unit is of (zerohop/sinks.hpp, Rendition): 0 = the main encode.
  std::uint8_t rendition = 0;
};

using EncodedUnitPtr = std::shared_ptr<const EncodedUnit>;

}  // namespace zerohop
