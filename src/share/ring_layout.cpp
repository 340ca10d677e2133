#include "share/ring_layout.hpp"

#include <cstring>

namespace zerohop::share_detail {

namespace {
constexpr std::size_t kPage = 4096;
constexpr std::size_t headerBytes() noexcept {
  return (sizeof(ControlHeader) + alignof(SlotHeader) - 1) / alignof(SlotHeader) * alignof(SlotHeader);
}
}  // namespace

std::size_t controlBlockBytes(std::uint32_t slots) noexcept {
  const std::size_t bytes = headerBytes() + std::size_t{slots} * sizeof(SlotHeader);
  return (bytes + kPage - 1) / kPage * kPage;
}

SlotHeader* slotHeaders(std::uint8_t* control) noexcept {
  return reinterpret_cast<SlotHeader*>(control + headerBytes());
}
const SlotHeader* slotHeaders(const std::uint8_t* control) noexcept {
  return reinterpret_cast<const SlotHeader*>(control + headerBytes());
}

std::uint64_t beginWrite(SlotHeader& slot) noexcept {
  const std::uint64_t before = slot.seq.load(std::memory_order_relaxed) & ~std::uint64_t{1};
  slot.seq.store(before + 1, std::memory_order_relaxed);
  // Readers that see any of the data written after this fence also see the odd sequence.
  std::atomic_thread_fence(std::memory_order_release);
  return before;
}

void endWrite(SlotHeader& slot, std::uint64_t before, const SlotRecord& record) noexcept {
  std::uint64_t words[kRecordWords];
  std::memcpy(words, &record, sizeof(record));
  for (std::size_t i = 0; i < kRecordWords; ++i) slot.words[i].store(words[i], std::memory_order_relaxed);
  slot.seq.store(before + 2, std::memory_order_release);
}

void abortWrite(SlotHeader& slot, std::uint64_t before) noexcept {
  endWrite(slot, before, SlotRecord{});
}

std::optional<RecordSnapshot> readRecord(const SlotHeader& slot) noexcept {
  const std::uint64_t s1 = slot.seq.load(std::memory_order_acquire);
  if (s1 & 1) return std::nullopt;
  std::uint64_t words[kRecordWords];
  for (std::size_t i = 0; i < kRecordWords; ++i) words[i] = slot.words[i].load(std::memory_order_relaxed);
  std::atomic_thread_fence(std::memory_order_acquire);
  if (slot.seq.load(std::memory_order_relaxed) != s1) return std::nullopt;
  RecordSnapshot snap;
  snap.seq = s1;
  std::memcpy(&snap.record, words, sizeof(words));
  return snap;
}

bool stillValid(const SlotHeader& slot, std::uint64_t seq) noexcept {
  std::atomic_thread_fence(std::memory_order_acquire);
  return slot.seq.load(std::memory_order_relaxed) == seq;
}

}  // namespace zerohop::share_detail
