#include "rtsp/rtsp_timing.hpp"

namespace zerohop::rtsp {
namespace {
constexpr std::int64_t kNtpToUnixNs = 2'208'988'800LL * 1'000'000'000LL;  // 1900-01-01 to 1970-01-01
}  // namespace

CaptureTime captureTimeOf(std::uint64_t ntpNs, std::int64_t arrivalMonotonicNs,
                          std::int64_t arrivalRealtimeNs) noexcept {
  CaptureTime t{arrivalMonotonicNs, arrivalRealtimeNs, CaptureClock::kArrival, 0};
  if (ntpNs == 0 || ntpNs < static_cast<std::uint64_t>(kNtpToUnixNs)) return t;
  const std::int64_t cameraRealtimeNs = static_cast<std::int64_t>(ntpNs) - kNtpToUnixNs;
  t.cameraBehindNs = arrivalRealtimeNs - cameraRealtimeNs;
  if (t.cameraBehindNs < -kCameraAheadToleranceNs || t.cameraBehindNs > kCameraBehindLimitNs) {
    t.clock = CaptureClock::kCameraClockOff;
    return t;
  }
  t.clock = CaptureClock::kCamera;
  // A camera time after the arrival (ahead by less than the tolerance) is skew: the capture stays the
  // arrival.
  if (t.cameraBehindNs > 0) {
    t.monotonicNs = arrivalMonotonicNs - t.cameraBehindNs;
    t.realtimeNs = cameraRealtimeNs;
  }
  return t;
}

}  // namespace zerohop::rtsp
