#pragma once
// The A/V sync marker schedule: the instants, on the capture clock (CLOCK_MONOTONIC nanoseconds, the
// clock every frame and audio block is stamped with), at which the test tone clicks and the test camera
// draws its marker. Both call these functions, so a receiver can measure audio against video by the
// click against the marker. The schedule: every full second of the capture clock.
// Thread-safety: pure functions, reentrant.

#include <cstdint>

namespace zerohop {

inline constexpr std::int64_t kAvMarkerPeriodNs = 1'000'000'000;

/// The latest marker instant at or before `ns`.
constexpr std::int64_t avMarkerAtOrBefore(std::int64_t ns) noexcept {
  const std::int64_t r = ns % kAvMarkerPeriodNs;
  return ns - (r < 0 ? r + kAvMarkerPeriodNs : r);
}

/// The earliest marker instant at or after `ns`.
constexpr std::int64_t avMarkerAtOrAfter(std::int64_t ns) noexcept {
  const std::int64_t before = avMarkerAtOrBefore(ns);
  return before == ns ? ns : before + kAvMarkerPeriodNs;
}

/// True when a marker instant lies in [beginNs, endNs): a video frame exposed over that interval
/// carries the marker; an audio block covering it carries the click's start.
constexpr bool avMarkerIn(std::int64_t beginNs, std::int64_t endNs) noexcept {
  return beginNs < endNs && avMarkerAtOrAfter(beginNs) < endNs;
}

}  // namespace zerohop
