#include "core/bounded_queue.hpp"

#include <gtest/gtest.h>

#include <chrono>
#include <thread>

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
