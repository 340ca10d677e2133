#include "core/bounded_queue.hpp"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <thread>
#include <vector>

#include "zerohop/buffer_pool.hpp"

namespace zerohop {
namespace {

using namespace std::chrono_literals;

TEST(BoundedQueue, DropsOldestAndReleasesItsLease) {
  BufferPool pool(computeLayout(PixelFormat::kYUYV, 16, 16), 4, makeHostAllocator());
  BoundedQueue<FrameLease> q(2);
  for (std::uint64_t seq = 0; seq < 4; ++seq) {
    auto lease = pool.tryAcquire();
    ASSERT_TRUE(lease);
    lease->frame().sequence = seq;
    ASSERT_TRUE(q.push(std::move(*lease)));
  }
  EXPECT_EQ(q.dropped(), 2u);
  EXPECT_EQ(pool.stats().free, 2u) << "evicted leases must go back to the pool";
  auto a = q.pop(0ms);
  auto b = q.pop(0ms);
  ASSERT_TRUE(a && b);
  EXPECT_EQ((*a)->sequence, 2u);
  EXPECT_EQ((*b)->sequence, 3u);
  EXPECT_FALSE(q.pop(1ms).has_value());
}

TEST(BoundedQueue, PushEvictingHandsBackWhatItDropped) {
  BoundedQueue<int> q(2);
  bool accepted = false;
  EXPECT_FALSE(q.pushEvicting(1, &accepted).has_value());
  EXPECT_TRUE(accepted);
  EXPECT_FALSE(q.pushEvicting(2).has_value());
  EXPECT_EQ(q.pushEvicting(3), std::optional<int>(1)) << "the oldest goes, to the caller";
  EXPECT_EQ(q.dropped(), 1u);
  q.close();
  EXPECT_FALSE(q.pushEvicting(4, &accepted).has_value());
  EXPECT_FALSE(accepted);
}

// The evicted item is seen before the new one can be taken: a consumer that pops the newer item finds
// `see` already ran (passthrough: a lost reference must hold back what follows it; ci23 sent a P-frame
// whose reference the queue had evicted, the eviction noted only after the encode thread took the next).
TEST(BoundedQueue, PushSeeingEvictedShowsTheEvictedItemBeforeTheNewOneCanBeTaken) {
  constexpr int kItems = 20000;
  BoundedQueue<int> q(1);
  std::vector<std::atomic<bool>> seen(kItems + 1);
  std::atomic<bool> done{false};
  int takenBeforeSeen = 0, taken = 0;
  std::thread consumer([&] {
    int last = 0;  // every item between the last taken and the one taken now was evicted: seen already
    for (;;) {
      const bool finished = done.load();  // read before the pop: a pop that finds nothing after it ends
      const auto v = q.pop(1ms);
      if (!v) {
        if (finished) break;
        continue;
      }
      ++taken;
      for (int u = last + 1; u < *v; ++u) takenBeforeSeen += seen[u].load() ? 0 : 1;
      last = *v;
    }
  });
  for (int i = 1; i <= kItems; ++i) {
    q.pushSeeingEvicted(i, [&](const int& gone) {
      std::this_thread::yield();  // widens the window a notice after the push would leave open
      seen[gone].store(true);
    });
  }
  done = true;
  consumer.join();
  EXPECT_EQ(takenBeforeSeen, 0) << "an item was taken before the eviction of one before it was seen";
  EXPECT_GT(taken, 0);
  EXPECT_EQ(static_cast<std::uint64_t>(taken) + q.dropped(), static_cast<std::uint64_t>(kItems));
}

TEST(BoundedQueue, CloseWakesWaiterAndRefusesPushes) {
  BoundedQueue<int> q(1);
  // The waiter asks for 10 s; only close()'s notify can return it well before that, so the elapsed
  // time is what proves the wake-up (a close() that never notified would leave it waiting 10 s).
  std::chrono::steady_clock::duration waited{};
  std::thread waiter([&] {
    const auto start = std::chrono::steady_clock::now();
    EXPECT_FALSE(q.pop(10s).has_value());
    waited = std::chrono::steady_clock::now() - start;
  });
  std::this_thread::sleep_for(50ms);  // lets the waiter block first; closing earlier must work too
  q.close();
  waiter.join();
  EXPECT_LT(waited, 5s) << "close() did not wake the waiting pop()";
  EXPECT_FALSE(q.push(1));
}

}  // namespace
}  // namespace zerohop
