// The seqlock and packing rules of the shared control block, on ordinary memory.
#include "share/ring_layout.hpp"

#include <gtest/gtest.h>

#include <memory>
#include <vector>

namespace zerohop::share_detail {
namespace {

TEST(ShareRingLayout, PackingRoundTrips) {
  const auto l = packLatest(123456789, 255);
  EXPECT_EQ(latestIndex(l), 123456789u);
  EXPECT_EQ(latestSlot(l), 255u);
  const auto lease = packLease(0, 987654321);
  EXPECT_NE(lease, 0u) << "a lease on slot 0 must not look like a free entry";
  EXPECT_EQ(leaseSlot(lease), 0u);
  EXPECT_EQ(leaseMs(lease), 987654321);
  EXPECT_EQ(leaseSlot(packLease(kMaxSlots - 1, 5)), kMaxSlots - 1);
}

TEST(ShareRingLayout, ControlBlockHoldsHeaderAndSlots) {
  for (std::uint32_t n : {1u, 8u, kMaxSlots}) {
    const auto bytes = controlBlockBytes(n);
    EXPECT_EQ(bytes % 4096, 0u);
    std::vector<std::uint8_t> block(bytes);
    auto* base = block.data();
    EXPECT_LE(reinterpret_cast<std::uint8_t*>(slotHeaders(base) + n) - base,
              static_cast<std::ptrdiff_t>(bytes));
    EXPECT_GE(reinterpret_cast<std::uint8_t*>(slotHeaders(base)) - base,
              static_cast<std::ptrdiff_t>(sizeof(ControlHeader)));
  }
}

TEST(ShareRingLayout, ReaderNeverSeesARecordBeingWritten) {
  auto slot = std::make_unique<SlotHeader>();
  EXPECT_EQ(readRecord(*slot)->record.publishIndex, 0u) << "a fresh slot reads as empty";
  const auto before = beginWrite(*slot);
  EXPECT_FALSE(readRecord(*slot)) << "odd sequence: the publisher is writing";
  SlotRecord r;
  r.publishIndex = 42;
  r.sequence = 7;
  r.keyframe = 1;
  r.stageNs[2] = 99;
  endWrite(*slot, before, r);
  const auto snap = readRecord(*slot);
  ASSERT_TRUE(snap);
  EXPECT_EQ(snap->record.publishIndex, 42u);
  EXPECT_EQ(snap->record.sequence, 7u);
  EXPECT_EQ(snap->record.keyframe, 1);
  EXPECT_EQ(snap->record.stageNs[2], 99);
  EXPECT_TRUE(stillValid(*slot, snap->seq));
}

TEST(ShareRingLayout, ARewriteInvalidatesEarlierReads) {
  auto slot = std::make_unique<SlotHeader>();
  SlotRecord r;
  r.publishIndex = 1;
  endWrite(*slot, beginWrite(*slot), r);
  const auto first = readRecord(*slot);
  ASSERT_TRUE(first);
  const auto before = beginWrite(*slot);
  EXPECT_FALSE(stillValid(*slot, first->seq)) << "mid-write must already count as overwritten";
  r.publishIndex = 2;
  endWrite(*slot, before, r);
  EXPECT_FALSE(stillValid(*slot, first->seq));
  EXPECT_EQ(readRecord(*slot)->record.publishIndex, 2u);
}

TEST(ShareRingLayout, AnAbandonedWriteLeavesAnEmptySlot) {
  auto slot = std::make_unique<SlotHeader>();
  SlotRecord r;
  r.publishIndex = 5;
  endWrite(*slot, beginWrite(*slot), r);
  const auto first = readRecord(*slot);
  abortWrite(*slot, beginWrite(*slot));
  EXPECT_FALSE(stillValid(*slot, first->seq));
  const auto after = readRecord(*slot);
  ASSERT_TRUE(after);
  EXPECT_EQ(after->record.publishIndex, 0u);
}

}  // namespace
}  // namespace zerohop::share_detail
