// Allocators, host registration and the RAII handles on a real device: alignment, memory kind,
// data round trips, moves, error text naming the call, and no leaked device memory.
#include <gtest/gtest.h>

#include <cstdlib>
#include <cstring>
#include <random>
#include <vector>

#include "gpu_test_support.hpp"
#include "zerohop/buffer_pool.hpp"
#include "zerohop/error.hpp"
#include "zerohop/gpu_convert.hpp"

namespace zerohop::test {
namespace {

class GpuMemory : public GpuTest {};

std::vector<std::uint8_t> randomBytes(std::size_t n, unsigned seed) {
  std::mt19937 rng(seed);
  std::vector<std::uint8_t> v(n);
  for (auto& b : v) b = static_cast<std::uint8_t>(rng());
  return v;
}

TEST_F(GpuMemory, PinnedAllocatorGivesAlignedMappedMemory) {
  auto alloc = makePinnedAllocator(device_);
  EXPECT_EQ(alloc->kind(), MemoryKind::kPinned);
  const std::size_t bytes = 1920 * 1080 * 2 + 123;
  void* p = alloc->allocate(bytes);
  ASSERT_NE(p, nullptr);
  EXPECT_EQ(reinterpret_cast<std::uintptr_t>(p) % 4096, 0u);
  const auto data = randomBytes(bytes, 1);
  std::memcpy(p, data.data(), bytes);  // the host can write it directly
  cudaPointerAttributes attr{};
  cuda::check(cudaPointerGetAttributes(&attr, p), "cudaPointerGetAttributes");
  EXPECT_EQ(attr.type, cudaMemoryTypeHost);
  if (info_.canMapHostMemory) {
    void* mapped = nullptr;
    cuda::check(cudaHostGetDevicePointer(&mapped, p, 0), "cudaHostGetDevicePointer");
    EXPECT_NE(mapped, nullptr);
  }
  DeviceBuffer dev(device_, bytes);
  cuda::check(cudaMemcpy(dev.data(), p, bytes, cudaMemcpyHostToDevice), "cudaMemcpy");
  std::vector<std::uint8_t> back(bytes, 0xCD);
  cuda::check(cudaMemcpy(back.data(), dev.data(), bytes, cudaMemcpyDeviceToHost), "cudaMemcpy");
  EXPECT_EQ(back, data);
  alloc->deallocate(p, bytes);
}

TEST_F(GpuMemory, DeviceAllocatorBacksADeviceFramePool) {
  const auto layout = computeLayout(PixelFormat::kNV12, 1280, 720, 256);
  BufferPool pool(layout, 3, makeDeviceAllocator(device_));
  EXPECT_EQ(pool.memoryKind(), MemoryKind::kDevice);
  std::vector<FrameLease> leases;
  for (int i = 0; i < 3; ++i) {
    auto lease = pool.tryAcquire();
    ASSERT_TRUE(lease);
    EXPECT_EQ((*lease)->memory, MemoryKind::kDevice);
    EXPECT_EQ(reinterpret_cast<std::uintptr_t>((*lease)->data[0]) % 4096, 0u);
    cudaPointerAttributes attr{};
    cuda::check(cudaPointerGetAttributes(&attr, (*lease)->data[0]), "cudaPointerGetAttributes");
    EXPECT_EQ(attr.type, cudaMemoryTypeDevice);
    EXPECT_EQ(attr.device, device_);
    cuda::check(cudaMemset((*lease)->data[0], 0x5A, layout.totalBytes), "cudaMemset");
    leases.push_back(std::move(*lease));
  }
  EXPECT_FALSE(pool.tryAcquire().has_value());
  leases.clear();
  EXPECT_EQ(pool.stats().free, 3u);
}

TEST_F(GpuMemory, NoDeviceMemoryLeaksAcrossPoolsAndConverters) {
  cuda::check(cudaFree(nullptr), "cudaFree(nullptr)");  // context up before the first reading
  std::size_t freeBefore = 0, freeAfter = 0, total = 0;
  {
    // Warm the allocator's and runtime's own one-time reservations first.
    BufferPool warm(computeLayout(PixelFormat::kNV12, 64, 64), 1, makeDeviceAllocator(device_));
    GpuConverter conv(device_);
  }
  cuda::check(cudaMemGetInfo(&freeBefore, &total), "cudaMemGetInfo");
  for (int round = 0; round < 3; ++round) {
    BufferPool pool(computeLayout(PixelFormat::kNV12, 3840, 2160), 8, makeDeviceAllocator(device_));
    GpuConverter conv(device_);
    HostImage image = makeImage(PixelFormat::kYUYV, 3840, 2160);
    std::mt19937 rng(round);
    fillRandom(image, rng);
    PlacedFrame src(image, MemoryKind::kPinned, device_);
    auto lease = pool.tryAcquire();
    ASSERT_TRUE(lease);
    conv.convert(src.frame, lease->frame(), nullptr, Completion::kWait);
  }
  cuda::check(cudaMemGetInfo(&freeAfter, &total), "cudaMemGetInfo");
  // 3 rounds x ~100 MB allocated and freed; allow 8 MB of allocator granularity.
  EXPECT_LE(freeBefore > freeAfter ? freeBefore - freeAfter : 0, std::size_t{8} << 20)
      << "free before " << freeBefore << ", after " << freeAfter;
}

TEST_F(GpuMemory, HostRegistrationMakesDriverOwnedMemoryUsable) {
  // Stands in for a V4L2 MMAP buffer: memory someone else allocated, registered once.
  const std::uint32_t w = 1280, h = 720;
  const std::size_t bytes = std::size_t(w) * h * 2;
  void* mem = std::aligned_alloc(4096, bytes);
  ASSERT_NE(mem, nullptr);
  {
    HostRegistration reg(mem, bytes, device_);
    EXPECT_EQ(reg.data(), mem);
    EXPECT_EQ(reg.size(), bytes);
    HostRegistration moved(std::move(reg));
    EXPECT_EQ(reg.data(), nullptr);
    EXPECT_EQ(moved.data(), mem);

    HostImage image = makeImage(PixelFormat::kYUYV, w, h);
    std::mt19937 rng(5);
    fillCameraLike(image, rng);
    std::memcpy(mem, image.plane[0].data(), bytes);
    Frame src;
    bindLayout(src, computeLayout(PixelFormat::kYUYV, w, h), static_cast<std::uint8_t*>(mem), MemoryKind::kPinned);
    for (IngestMode mode : {IngestMode::kCopy, IngestMode::kZeroCopy}) {
      if (mode == IngestMode::kZeroCopy && !moved.mapped()) continue;
      DeviceTarget target(PixelFormat::kNV12, w, h, 0, device_);
      target.poison(0xCD);
      GpuConverter conv(device_, mode);
      conv.convert(src, target.frame, nullptr, Completion::kWait);
      EXPECT_TRUE(matchesReference(target.download(), referenceConvert(image, PixelFormat::kNV12, {}), 0, 0xCD))
          << ingestModeName(mode);
    }
    moved.reset();
    moved.reset();  // idempotent
    EXPECT_EQ(moved.data(), nullptr);
  }
  // Unregistered again: registering it a second time works.
  { HostRegistration again(mem, bytes, device_); }
  std::free(mem);
}

TEST_F(GpuMemory, HandlesMoveAndReleaseOnce) {
  CudaStream a(device_);
  cudaStream_t raw = a.get();
  CudaStream b(std::move(a));
  EXPECT_EQ(a.get(), nullptr);
  EXPECT_EQ(b.get(), raw);
  CudaEvent e(device_, true);
  CudaEvent f = std::move(e);
  EXPECT_EQ(e.get(), nullptr);
  f.record(b.get());
  f.synchronize();
  DeviceBuffer d(device_, 1000);
  DeviceBuffer d2 = std::move(d);
  EXPECT_EQ(d.data(), nullptr);
  EXPECT_EQ(d2.size(), 1000u);
  PinnedBuffer p(device_, 5000);
  PinnedBuffer p2 = std::move(p);
  EXPECT_EQ(p.data(), nullptr);
  EXPECT_NE(p2.data(), nullptr);
  b.reset();
  b.reset();
  d2.reset();
  p2.reset();
}

TEST_F(GpuMemory, ErrorsNameTheCallAndCudaText) {
  try {
    DeviceBuffer huge(device_, std::size_t{1} << 50);
    FAIL() << "a 1 PiB cudaMalloc succeeded";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), Errc::kUnavailable);
    EXPECT_NE(std::string(e.what()).find("cudaMalloc failed: cudaErrorMemoryAllocation"), std::string::npos)
        << e.what();
  }
  try {
    cuda::DeviceGuard guard(info_.deviceCount + 7);
    FAIL() << "selecting a missing device succeeded";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), Errc::kNotFound);
    EXPECT_NE(std::string(e.what()).find("cudaSetDevice failed: cudaErrorInvalidDevice"), std::string::npos)
        << e.what();
  }
  // The failed calls leave no sticky error behind.
  DeviceBuffer fine(device_, 4096);
  EXPECT_EQ(cudaGetLastError(), cudaSuccess);
}

}  // namespace
}  // namespace zerohop::test
