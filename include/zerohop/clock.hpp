#pragma once
// Clocks used for frame timestamps. Every stage timestamp is CLOCK_MONOTONIC nanoseconds (the
// clock V4L2 drivers stamp buffers with); the timecode drawn into pixels carries CLOCK_REALTIME
// milliseconds so a browser on the same (or an NTP-synchronised) machine can compare it with its own clock.
// Thread-safety: reentrant.

#include <cstdint>

namespace zerohop {

std::int64_t monotonicNs() noexcept;
std::int64_t realtimeNs() noexcept;

}  // namespace zerohop
