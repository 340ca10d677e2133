// gpu_detail::RecentSlots, the bounded per-destination store behind the GPU producers' ready events:
// a caller writing into ever new buffers must not grow it, a buffer written again keeps its value,
// and values are handed over least recently used first (pure logic: plain numbers, no device).
#include "gpu/recent_slots.hpp"

#include <gtest/gtest.h>

#include <set>

namespace zerohop::gpu_detail {
namespace {

TEST(RecentSlots, ManyDistinctKeysStayWithinCapacity) {
  RecentSlots<const void*, int> slots(4);
  int made = 0;
  std::set<int*> values;
  static char buffers[1000];
  for (char& b : buffers) {
    const auto slot = slots.find(&b, [&] { return made++; });
    values.insert(&slot.value);
  }
  EXPECT_EQ(slots.size(), 4u);
  EXPECT_EQ(made, 4) << "a value per key ever seen: the store grows without bound";
  EXPECT_EQ(values.size(), 4u) << "values must be reused, never destroyed and made anew";
}

TEST(RecentSlots, AKeySeenAgainGetsItsOwnValue) {
  RecentSlots<int, int> slots(3);
  int made = 0;
  auto make = [&] { return ++made; };
  const auto a = slots.find(10, make);
  EXPECT_FALSE(a.takenOver);
  const int aValue = a.value;
  slots.find(11, make);
  const auto again = slots.find(10, make);
  EXPECT_EQ(again.value, aValue);
  EXPECT_EQ(&again.value, &a.value);
  EXPECT_FALSE(again.takenOver);
  EXPECT_EQ(made, 2);
}

TEST(RecentSlots, TheLeastRecentlyUsedValueIsTakenOver) {
  RecentSlots<int, int> slots(3);
  int made = 0;
  auto make = [&] { return ++made; };
  const int v1 = slots.find(1, make).value;  // 1
  slots.find(2, make);                       // 2
  slots.find(3, make);                       // 3
  slots.find(1, make);                       // 1 is now the most recent; 2 the least
  const auto four = slots.find(4, make);
  EXPECT_TRUE(four.takenOver);
  EXPECT_EQ(four.value, 2) << "key 2's value (the least recently used) goes to key 4";
  EXPECT_EQ(slots.find(1, make).value, v1) << "a recently used key keeps its value";
  const auto two = slots.find(2, make);  // 3 is the least recent now
  EXPECT_TRUE(two.takenOver);
  EXPECT_EQ(two.value, 3);
  EXPECT_EQ(made, 3);
  EXPECT_EQ(slots.size(), 3u);
}

}  // namespace
}  // namespace zerohop::gpu_detail
