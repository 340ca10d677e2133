#pragma once
// Which slot the publisher writes next. Pure logic, no shared memory, so it is unit-tested alone.
//
// Policy (the producer never waits): never the slot holding the latest frame while another exists;
// never a slot the producer is itself still writing; prefer slots no reader leases (a lease older
// than the lease timeout, or stamped in the future, no longer counts); among those the one holding the oldest frame. When every
// candidate is leased, overwrite the oldest anyway and report it, so the reader sees an overrun.
// Thread-safety: reentrant.

#include <cstdint>
#include <optional>
#include <span>

namespace zerohop::share_detail {

/// Milliseconds a lease stamp may lie ahead of the publisher's clock (both read CLOCK_MONOTONIC on
/// one machine, so only the reader's rounding); past it the stamp is forged and counts as expired.
inline constexpr std::int64_t kLeaseClockSlackMs = 2;

/// Whether a lease taken at `stampMs` still protects its slot at `nowMs`: younger than the timeout
/// and not from the future (a far-future stamp would otherwise pin the slot for ever).
constexpr bool leaseLive(std::int64_t stampMs, std::int64_t nowMs, std::int64_t leaseTimeoutMs) noexcept {
  return stampMs >= 0 && stampMs <= nowMs + kLeaseClockSlackMs && nowMs - stampMs < leaseTimeoutMs;
}

struct SlotState {
  std::uint64_t publishIndex = 0;   ///< 0 = never written (oldest of all)
  bool writing = false;             ///< the publisher holds a WriteSlot on it
  bool latest = false;              ///< holds the most recent published frame
  std::int64_t newestLeaseMs = -1;  ///< acquisition time of the newest live lease, -1 = none
};

struct SlotChoice {
  std::uint32_t slot = 0;
  bool overwroteLease = false;  ///< every candidate was leased: a reader will see an overrun
  bool skippedLeased = false;   ///< an older slot was passed over because a reader leases it
};

/// nullopt only when every slot is being written by the publisher itself.
std::optional<SlotChoice> pickSlot(std::span<const SlotState> slots, std::int64_t nowMs,
                                   std::int64_t leaseTimeoutMs) noexcept;

}  // namespace zerohop::share_detail
