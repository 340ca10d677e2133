// The publisher's slot choice: oldest free slot, never the latest, leases respected for a bounded time.
#include "share/slot_picker.hpp"

#include <gtest/gtest.h>

#include <vector>

namespace zerohop::share_detail {
namespace {

constexpr std::int64_t kNow = 100'000;
constexpr std::int64_t kTimeout = 1000;

std::vector<SlotState> ring(std::vector<std::uint64_t> indices, std::uint32_t latest) {
  std::vector<SlotState> s(indices.size());
  for (std::size_t i = 0; i < indices.size(); ++i) {
    s[i].publishIndex = indices[i];
    s[i].latest = i == latest;
  }
  return s;
}

TEST(ShareSlotPicker, FillsEmptySlotsFirst) {
  auto s = ring({5, 0, 4}, 0);
  const auto c = pickSlot(s, kNow, kTimeout);
  ASSERT_TRUE(c);
  EXPECT_EQ(c->slot, 1u);
  EXPECT_FALSE(c->overwroteLease);
  EXPECT_FALSE(c->skippedLeased);
}

TEST(ShareSlotPicker, OverwritesTheOldestButNeverTheLatest) {
  auto s = ring({7, 5, 6, 8}, 3);
  EXPECT_EQ(pickSlot(s, kNow, kTimeout)->slot, 1u);
  s = ring({1, 9, 8}, 0);  // slot 0 is oldest by index but marked latest: never chosen
  EXPECT_EQ(pickSlot(s, kNow, kTimeout)->slot, 2u);
}

TEST(ShareSlotPicker, SkipsALeasedSlot) {
  auto s = ring({7, 5, 6, 8}, 3);
  s[1].newestLeaseMs = kNow - 10;
  const auto c = pickSlot(s, kNow, kTimeout);
  EXPECT_EQ(c->slot, 2u);
  EXPECT_TRUE(c->skippedLeased);
  EXPECT_FALSE(c->overwroteLease);
}

TEST(ShareSlotPicker, AnExpiredLeaseNoLongerProtects) {
  auto s = ring({7, 5, 6, 8}, 3);
  s[1].newestLeaseMs = kNow - kTimeout;
  const auto c = pickSlot(s, kNow, kTimeout);
  EXPECT_EQ(c->slot, 1u);
  EXPECT_FALSE(c->skippedLeased);
}

// issue 22: a same-uid reader stamping leases far in the future pinned slots for ever.
TEST(ShareSlotPicker, AStampFromTheFutureDoesNotProtect) {
  auto s = ring({7, 5, 6, 8}, 3);
  s[1].newestLeaseMs = kNow + 1'000'000;
  const auto c = pickSlot(s, kNow, kTimeout);
  EXPECT_EQ(c->slot, 1u);
  EXPECT_FALSE(c->skippedLeased);
  EXPECT_TRUE(leaseLive(kNow + kLeaseClockSlackMs, kNow, kTimeout)) << "rounding slack";
  EXPECT_FALSE(leaseLive(kNow + kLeaseClockSlackMs + 1, kNow, kTimeout));
}

TEST(ShareSlotPicker, OverwritesTheOldestWhenEverythingIsLeased) {
  auto s = ring({7, 5, 6, 8}, 3);
  for (auto& slot : s) slot.newestLeaseMs = kNow;
  const auto c = pickSlot(s, kNow, kTimeout);
  EXPECT_EQ(c->slot, 1u);
  EXPECT_TRUE(c->overwroteLease);
}

TEST(ShareSlotPicker, NeverPicksASlotBeingWritten) {
  auto s = ring({7, 5, 6, 8}, 3);
  s[1].writing = true;
  EXPECT_EQ(pickSlot(s, kNow, kTimeout)->slot, 2u);
  for (auto& slot : s) slot.writing = true;
  EXPECT_FALSE(pickSlot(s, kNow, kTimeout));
}

TEST(ShareSlotPicker, ASingleSlotRingReusesItsOnlySlot) {
  auto s = ring({3}, 0);
  EXPECT_EQ(pickSlot(s, kNow, kTimeout)->slot, 0u);
  s[0].newestLeaseMs = kNow;
  EXPECT_TRUE(pickSlot(s, kNow, kTimeout)->overwroteLease);
}

}  // namespace
}  // namespace zerohop::share_detail
