#include "share/slot_picker.hpp"

namespace zerohop::share_detail {

std::optional<SlotChoice> pickSlot(std::span<const SlotState> slots, std::int64_t nowMs,
                                   std::int64_t leaseTimeoutMs) noexcept {
  std::optional<std::uint32_t> oldestAny, oldestFree;
  std::optional<std::uint32_t> latestSlot;
  for (std::uint32_t i = 0; i < slots.size(); ++i) {
    const auto& s = slots[i];
    if (s.writing) continue;
    if (s.latest) {
      latestSlot = i;
      continue;
    }
    if (!oldestAny || s.publishIndex < slots[*oldestAny].publishIndex) oldestAny = i;
    const bool leased = leaseLive(s.newestLeaseMs, nowMs, leaseTimeoutMs);
    if (!leased && (!oldestFree || s.publishIndex < slots[*oldestFree].publishIndex)) oldestFree = i;
  }
  if (oldestFree) {
    return SlotChoice{*oldestFree, false, *oldestAny != *oldestFree};
  }
  if (oldestAny) return SlotChoice{*oldestAny, true, false};
  // Only the latest slot is not being written: a one-slot ring, or all others in flight.
  if (latestSlot) {
    const auto& s = slots[*latestSlot];
    const bool leased = leaseLive(s.newestLeaseMs, nowMs, leaseTimeoutMs);
    return SlotChoice{*latestSlot, leased, false};
  }
  return std::nullopt;
}

}  // namespace zerohop::share_detail
