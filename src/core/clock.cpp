#include "zerohop/clock.hpp"

#include <time.h>

namespace zerohop {
namespace {
std::int64_t readClock(clockid_t id) noexcept {
  timespec ts{};
  clock_gettime(id, &ts);
  return static_cast<std::int64_t>(ts.tv_sec) * 1'000'000'000 + ts.tv_nsec;
}
}  // namespace

std::int64_t monotonicNs() noexcept { return readClock(CLOCK_MONOTONIC); }
std::int64_t realtimeNs() noexcept { return readClock(CLOCK_REALTIME); }

}  // namespace zerohop
