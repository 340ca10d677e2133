#pragma once
// When an RTSP camera's frame was captured. The camera's RTCP sender reports map its RTP clock to its
// wall clock (NTP); rtspsrc (add-reference-timestamp-meta) attaches that wall-clock time to each frame
// once the first report has come. With the camera's clock in step with this host's (both on NTP), the
// capture time is that wall-clock time, so per-stage latency starts at the camera; without a report,
// or with a camera clock too far from this host's to be believed, it is the frame's arrival.
// Pure: the clocks are parameters. Thread-safety: reentrant.

#include <cstdint>

namespace zerohop::rtsp {

enum class CaptureClock : std::uint8_t {
  kArrival,         ///< no sender report yet: the frame's arrival time
  kCamera,          ///< the camera's wall clock (RTCP SR), mapped onto this host's clocks
  kCameraClockOff,  ///< a sender report, but the camera's clock is out of step with this host's: arrival
};

struct CaptureTime {
  std::int64_t monotonicNs = 0;  ///< CLOCK_MONOTONIC of the capture
  std::int64_t realtimeNs = 0;   ///< CLOCK_REALTIME of the capture
  CaptureClock clock = CaptureClock::kArrival;
  std::int64_t cameraBehindNs =
      0;  ///< arrival minus the camera's time (negative: the camera's clock is ahead)
};

/// A camera time up to this far after the frame's arrival is taken as clock skew and clamped to the arrival.
inline constexpr std::int64_t kCameraAheadToleranceNs = 1'000'000'000;
/// A camera time further than this before the frame's arrival is taken as a clock out of step.
inline constexpr std::int64_t kCameraBehindLimitNs = 10'000'000'000;

/// `ntpNs`: the camera's time of the frame, ns since 1900 (0 = none); `arrival*`: this host's clocks
/// when the frame arrived.
CaptureTime captureTimeOf(std::uint64_t ntpNs, std::int64_t arrivalMonotonicNs,
                          std::int64_t arrivalRealtimeNs) noexcept;

}  // namespace zerohop::rtsp
