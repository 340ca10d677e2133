#pragma once
// Format negotiation as pure logic: given what a camera offers and what was asked for, pick the
// nearest mode and say how it differs. No device involved, so it is unit-tested directly.
// Thread-safety: reentrant.

#include <string>
#include <vector>

#include "zerohop/capture.hpp"

namespace zerohop::capture_detail {

struct ModeRequest {
  PixelFormat format = PixelFormat::kUnknown;  ///< kUnknown: no preference
  std::uint32_t width = 0;                     ///< 0: no preference
  std::uint32_t height = 0;
  double fps = 0;  ///< 0: no preference
};

struct ChosenMode {
  CaptureFormat const* format = nullptr;  ///< points into the offered list
  std::uint32_t width = 0;
  std::uint32_t height = 0;
  double fps = 0;       ///< 0 when the driver lists no intervals for the size
  bool exact = true;    ///< every stated preference was met
  std::string differs;  ///< "format mjpeg instead of h264; size 1280x720 instead of 1000x600"
};

/// Picks the mode nearest to `request`. Where the request states nothing, `current` (the device's
/// present mode) decides, then the largest size and fastest rate. A requested format that is
/// missing is replaced by one of the same kind (raw or compressed) if any, preferring YUYV, UYVY,
/// NV12, MJPEG, H.264 in that order. Sizes: smallest |dw| + |dh|, ties to the larger.
/// Rates: nearest. Throws Error(kUnsupported) when no offered format is one zerohop consumes.
ChosenMode chooseMode(const std::vector<CaptureFormat>& offered, const ModeRequest& request,
                      const ModeRequest& current);

}  // namespace zerohop::capture_detail
