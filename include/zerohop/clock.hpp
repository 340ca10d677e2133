#pragma once
// Clocks used for frame timestamps. Every stage timestamp is CLOCK_MONOTONIC nanoseconds (the
// clock V4L2 drivers stamp buffers with); the timecode drawn into pixels carries CLOCK_REALTIME
// milliseconds so a browser on the same (or an NTP-synchronised) machine can compare it with its own clock.
// Thread-safety: reentrant.

#include <cstdint>

#include "zerohop/export.h"

namespace zerohop {

ZEROHOP_API std::int64_t monotonicNs() noexcept;
ZEROHOP_API std::int64_t realtimeNs() noexcept;

}  // namespace zerohop
