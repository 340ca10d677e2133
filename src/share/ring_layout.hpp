#pragma once
// The bytes both sides of a share agree on: the control block (a memfd the publisher writes and
// readers map read-only), each slot's seqlocked metadata record, and a reader's lease page (a small
// memfd per reader that only that reader writes and the publisher reads).
//
// Control block:  [ControlHeader][SlotHeader x slotCount]         (page-rounded)
// Slot data:      [slot 0 ... slotStride][slot 1] ...               (host mode; page-aligned slots)
// Lease page:     [LeasePage]                                       (one per connected reader)
//
// Seqlock per slot: `seq` is even when the slot is stable and odd while the publisher writes it.
// Writer: seq+1 (odd), release fence, write pixels + record words, seq+2 (release store).
// Reader: s1 = seq (acquire, must be even), copy the record words (relaxed), acquire fence,
// s2 = seq; the copy is good iff s1 == s2. A lease's pixels are good iff seq is still s1 after use.
// All shared words are lock-free std::atomic (address-free, so valid across processes).
// Thread-safety: plain data and free functions; the functions are reentrant.

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <optional>

#include "zerohop/frame.hpp"

namespace zerohop::share_detail {

inline constexpr std::uint32_t kControlMagic = 0x5A48524Eu;  // "ZHRN": zerohop ring
inline constexpr std::uint32_t kLeaseMagic = 0x5A484C53u;    // "ZHLS": zerohop lease page
inline constexpr std::uint32_t kMaxSlots = 256;
inline constexpr std::uint32_t kLeaseEntries = 32;  ///< simultaneous leases one reader may hold

enum class RingMode : std::uint32_t { kImage = 1, kEncoded = 2 };

/// Immutable description written once before the control block is shared.
struct RingGeometry {
  std::uint32_t magic = kControlMagic;
  std::uint32_t version = 0;  ///< protocol version of the writer
  std::uint32_t slotCount = 0;
  std::uint32_t mode = 0;    ///< RingMode
  std::uint32_t memory = 0;  ///< MemoryKind of the slots
  std::int32_t producerPid = 0;
  std::uint64_t slotStride = 0;    ///< bytes between slot starts in the slot memfd
  std::uint64_t slotCapacity = 0;  ///< usable bytes per slot
  std::uint64_t sessionId = 0;     ///< differs for every publisher instance
  std::uint32_t format = 0, width = 0, height = 0, planeCount = 0;
  std::uint32_t planeOffset[kMaxPlanes]{}, planePitch[kMaxPlanes]{}, planeRows[kMaxPlanes]{},
      planeWidthBytes[kMaxPlanes]{};
  std::uint64_t controlBytes = 0;
};

enum class RingState : std::uint32_t { kLive = 1, kClosed = 2 };

struct alignas(64) ControlHeader {
  RingGeometry geometry;
  alignas(64) std::atomic<std::uint64_t> latest{0};  ///< packLatest(publishIndex, slot); 0 = none yet
  std::atomic<std::uint32_t> wakeWord{0};            ///< futex word: bumped on every publish and on close
  std::atomic<std::uint32_t> state{0};               ///< RingState
  std::atomic<std::uint64_t> publishes{0};
  /// Device rings: packLatest(publishIndex, slot) of the NEXT frame, chosen when the publisher
  /// committed the one before (the slot it will write unless leases change first); 0 = not said.
  /// In the header's padding: older readers never look at it, older publishers leave it 0.
  std::atomic<std::uint64_t> upcoming{0};
};
static_assert(sizeof(ControlHeader) == 192, "the control header's size is part of the share protocol");

/// Everything a reader learns about one published frame. Trivially copyable, copied as 64-bit words.
struct SlotRecord {
  std::uint64_t publishIndex = 0;  ///< 1-based ring-wide publish counter; 0 = slot never written
  std::uint64_t sequence = 0;      ///< the frame's own sequence number
  std::int64_t wallClockMs = 0;
  std::int64_t publishNs = 0;  ///< CLOCK_MONOTONIC when the publisher committed it
  std::int64_t stageNs[kStageCount]{};
  std::uint64_t bytesUsed = 0;
  std::uint32_t format = 0, width = 0, height = 0, planeCount = 0;
  std::uint32_t planeOffset[kMaxPlanes]{}, planePitch[kMaxPlanes]{};
  std::uint8_t matrix = 0, range = 0, keyframe = 0, memory = 0;
  std::uint32_t reserved = 0;
};
static_assert(sizeof(SlotRecord) % 8 == 0);
inline constexpr std::size_t kRecordWords = sizeof(SlotRecord) / 8;

struct alignas(64) SlotHeader {
  std::atomic<std::uint64_t> seq{0};
  std::atomic<std::uint64_t> words[kRecordWords];
};

struct alignas(64) LeasePage {
  std::uint32_t magic = kLeaseMagic;
  std::uint32_t entries = kLeaseEntries;
  /// 0 = free; otherwise packLease(slot, acquiredMs). Written only by the reader.
  std::atomic<std::uint64_t> entry[kLeaseEntries];
  /// Frames this reader has taken (latest()/next()); it only grows. The publisher drops a reader whose
  /// count stands still for ShareOptions::readerIdleTimeout while frames are published.
  std::atomic<std::uint64_t> reads{0};
};

/// Bytes of a lease page memfd (one page).
inline constexpr std::size_t kLeasePageBytes = (sizeof(LeasePage) + 4095) / 4096 * 4096;

static_assert(std::atomic<std::uint64_t>::is_always_lock_free);
static_assert(std::atomic<std::uint32_t>::is_always_lock_free);

inline constexpr std::uint64_t packLatest(std::uint64_t publishIndex, std::uint32_t slot) noexcept {
  return (publishIndex << 16) | slot;
}
inline constexpr std::uint64_t latestIndex(std::uint64_t packed) noexcept {
  return packed >> 16;
}
inline constexpr std::uint32_t latestSlot(std::uint64_t packed) noexcept {
  return static_cast<std::uint32_t>(packed & 0xFFFF);
}
inline constexpr std::uint64_t kLeaseMsMask = (std::uint64_t{1} << 48) - 1;
inline constexpr std::uint64_t packLease(std::uint32_t slot, std::int64_t acquiredMs) noexcept {
  return (static_cast<std::uint64_t>(slot + 1) << 48) |
         (static_cast<std::uint64_t>(acquiredMs) & kLeaseMsMask);
}
inline constexpr std::uint32_t leaseSlot(std::uint64_t packed) noexcept {  ///< valid only if packed != 0
  return static_cast<std::uint32_t>(packed >> 48) - 1;
}
inline constexpr std::int64_t leaseMs(std::uint64_t packed) noexcept {
  return static_cast<std::int64_t>(packed & kLeaseMsMask);
}

/// Bytes of the control block for `slots` slots, rounded up to whole pages.
std::size_t controlBlockBytes(std::uint32_t slots) noexcept;
/// The slot headers follow the control header.
SlotHeader* slotHeaders(std::uint8_t* control) noexcept;
const SlotHeader* slotHeaders(const std::uint8_t* control) noexcept;

/// Writer side of the seqlock: marks the slot odd (being written). Returns the even value it had.
std::uint64_t beginWrite(SlotHeader& slot) noexcept;
/// Stores the record and makes the slot even again (seq = before + 2).
void endWrite(SlotHeader& slot, std::uint64_t before, const SlotRecord& record) noexcept;
/// Abandons a write: the slot becomes even with an empty record (publishIndex 0).
void abortWrite(SlotHeader& slot, std::uint64_t before) noexcept;

struct RecordSnapshot {
  std::uint64_t seq = 0;  ///< the even seqlock value the record was read under
  SlotRecord record;
};
/// Reader side: a consistent copy of the record, or nullopt when the slot is being written or
/// changed while it was read (the caller counts that as an overrun and retries).
std::optional<RecordSnapshot> readRecord(const SlotHeader& slot) noexcept;
/// True while the slot still holds the record read under `seq` (call after using the pixels).
bool stillValid(const SlotHeader& slot, std::uint64_t seq) noexcept;

}  // namespace zerohop::share_detail
