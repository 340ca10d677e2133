#pragma once
// Asking an open V4L2 node what it offers (ENUM_FMT, ENUM_FRAMESIZES, ENUM_FRAMEINTERVALS).
// Thread-safety: reentrant.

#include <vector>

#include "capture/v4l2_device.hpp"
#include "zerohop/capture.hpp"

namespace zerohop::capture_detail {

/// Every capture format of `device` with its sizes and rates. Stepwise/continuous size ranges are
/// reported as their minimum and maximum (CaptureFormat::stepwise), each with its rates.
std::vector<CaptureFormat> enumerateFormats(const V4l2Device& device);

/// The rates offered for one format and size, fastest first (empty if the driver lists none).
std::vector<double> enumerateRates(const V4l2Device& device, std::uint32_t fourcc, std::uint32_t width,
                                   std::uint32_t height);

}  // namespace zerohop::capture_detail
