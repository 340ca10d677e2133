#include "zerohop/buffer_pool.hpp"

#include <gtest/gtest.h>

#include <cstring>
#include <set>
#include <thread>
#include <vector>

namespace zerohop {
namespace {

// Counts live allocations so the test can see when storage is really freed.
class CountingAllocator final : public FrameAllocator {
 public:
  explicit CountingAllocator(int* live) : live_(live) {}
  MemoryKind kind() const noexcept override { return MemoryKind::kHost; }
  void* allocate(std::size_t bytes) override {
    ++*live_;
    return ::operator new(bytes);
  }
  void deallocate(void* p, std::size_t) noexcept override {
    --*live_;
    ::operator delete(p);
  }

 private:
  int* live_;
};

TEST(BufferPool, LeasesAreDistinctAndReturnOnDestruction) {
  BufferPool pool(computeLayout(PixelFormat::kYUYV, 64, 32), 3, makeHostAllocator());
  std::vector<FrameLease> leases;
  std::set<std::uint8_t*> seen;
  for (int i = 0; i < 3; ++i) {
    auto lease = pool.tryAcquire();
    ASSERT_TRUE(lease);
    EXPECT_EQ((*lease)->format, PixelFormat::kYUYV);
    EXPECT_EQ((*lease)->pitch[0], 128u);
    seen.insert((*lease)->data[0]);
    leases.push_back(std::move(*lease));
  }
  EXPECT_EQ(seen.size(), 3u);
  EXPECT_FALSE(pool.tryAcquire().has_value());
  EXPECT_EQ(pool.stats().exhausted, 1u);
  leases.pop_back();
  EXPECT_EQ(pool.stats().free, 1u);
  EXPECT_TRUE(pool.tryAcquire().has_value());
}

TEST(BufferPool, MovedLeaseReleasesOnce) {
  BufferPool pool(computeLayout(PixelFormat::kNV12, 16, 16), 1, makeHostAllocator());
  auto a = pool.tryAcquire();
  ASSERT_TRUE(a);
  FrameLease b = std::move(*a);
  EXPECT_FALSE(*a);
  EXPECT_TRUE(b);
  b.reset();
  b.reset();
  EXPECT_EQ(pool.stats().free, 1u);
}

TEST(BufferPool, StorageOutlivesPoolWhileLeased) {
  int live = 0;
  std::optional<FrameLease> lease;
  {
    BufferPool pool(computeLayout(PixelFormat::kI420, 32, 32), 2, std::make_unique<CountingAllocator>(&live));
    EXPECT_EQ(live, 2);
    lease = pool.tryAcquire();
    ASSERT_TRUE(lease);
  }
  // The pool object is gone, the leased slot must still be writable storage.
  EXPECT_EQ(live, 2);
  std::memset((*lease)->data[0], 0x5a, 32 * 32);
  lease.reset();
  EXPECT_EQ(live, 0);
}

TEST(BufferPool, ConcurrentReleaseIsSafe) {
  BufferPool pool(computeLayout(PixelFormat::kYUYV, 16, 16), 8, makeHostAllocator());
  for (int round = 0; round < 200; ++round) {
    std::vector<FrameLease> leases;
    while (auto l = pool.tryAcquire()) leases.push_back(std::move(*l));
    ASSERT_EQ(leases.size(), 8u);
    std::vector<std::thread> threads;
    for (auto& l : leases) threads.emplace_back([lease = std::move(l)]() mutable { lease.reset(); });
    for (auto& t : threads) t.join();
    ASSERT_EQ(pool.stats().free, 8u);
  }
}

}  // namespace
}  // namespace zerohop
