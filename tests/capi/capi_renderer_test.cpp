// The C API's calls for renderers against shares in this process: a ring's memory fd, the ready
// semaphore a frame signals, and the next frame read before it exists (the publisher signals it). Device
// rings come from the fake device transport (tests/share), so these run without a GPU.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <poll.h>
#include <unistd.h>

#include <cstdint>
#include <mutex>
#include <string>

#include "capi_fixture.hpp"
#include "fake_device_transport.hpp"
#include "zerohop/zerohop.h"

namespace {

using zerohop::capi_test::CApi;

// A pipe's write end stands in for a renderer's semaphore fd: true once it was closed.
bool writeEndClosed(int readEnd) {
  pollfd p{readEnd, POLLIN, 0};
  return ::poll(&p, 1, 0) == 1 && (p.revents & POLLHUP) != 0;
}

TEST_F(CApi, RendererCallsOnAHostFrameAndWithoutAGpuAreRefusedWithTheirReasonAndTheFdClosed) {
  zh_publisher* pub = nullptr;
  const auto po = hostImages();
  ASSERT_EQ(zh_publisher_create(name_.c_str(), &po, &pub), ZH_OK) << zh_last_error();
  zh_reader* reader = nullptr;
  const auto ro = readerOptions();
  ASSERT_EQ(zh_reader_open_with(name_.c_str(), &ro, &reader), ZH_OK) << zh_last_error();
  publishFilled(pub, 1, 1);
  zh_frame* frame = nullptr;
  ASSERT_EQ(zh_reader_next(reader, 1000, &frame), ZH_OK) << zh_last_error();
  int fd = 7;
  EXPECT_EQ(zh_frame_get_ring_memory(frame, &fd, nullptr, nullptr, nullptr, nullptr), ZH_ERR_NOT_FOUND);
  EXPECT_NE(std::string(zh_last_error()).find("no memory fd to import"), std::string::npos)
      << zh_last_error();
  EXPECT_EQ(fd, 7) << "nothing written on failure";

  // This process's real transport: none (a build without CUDA) or CUDA without a GPU here.
  int p[2];
  ASSERT_EQ(::pipe2(p, O_CLOEXEC), 0);
  zh_ready_semaphore* sem = nullptr;
  const zh_status st = zh_ready_semaphore_import(p[1], 1, 0, &sem);
  // ZH_ERR_UNSUPPORTED without CUDA, ZH_ERR_DEVICE or ZH_ERR_UNAVAILABLE (no driver) with it.
  EXPECT_TRUE(st == ZH_ERR_UNSUPPORTED || st == ZH_ERR_DEVICE || st == ZH_ERR_UNAVAILABLE)
      << zh_status_name(st) << ": " << zh_last_error();
  EXPECT_NE(std::string(zh_last_error()).find("zh_ready_semaphore_import"), std::string::npos)
      << zh_last_error();
  EXPECT_EQ(sem, nullptr);
  EXPECT_TRUE(writeEndClosed(p[0])) << "the fd is the import's in every case";
  ::close(p[0]);
  ASSERT_EQ(::pipe2(p, O_CLOEXEC), 0);
  EXPECT_EQ(zh_ready_semaphore_import(p[1], 1, 0, nullptr), ZH_ERR_INVALID_ARGUMENT);
  EXPECT_TRUE(writeEndClosed(p[0]));
  ::close(p[0]);
  EXPECT_EQ(zh_frame_signal_when_ready(frame, nullptr, 1), ZH_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(zh_ready_semaphore_destroy(nullptr), ZH_OK);

  EXPECT_EQ(zh_frame_release(frame), ZH_OK);
  EXPECT_EQ(zh_reader_close(reader), ZH_OK);
  EXPECT_EQ(zh_publisher_close(pub), ZH_OK);
}

/// The fake device transport (tests/share) registered while it lives, the real one (if any) after.
struct FakeTransportInUse {
  zerohop::share_test::FakeDeviceTransport fake;
  zerohop::share_detail::DeviceTransport* const real = zerohop::share_detail::deviceTransport();
  FakeTransportInUse() { zerohop::share_detail::registerDeviceTransport(&fake); }
  ~FakeTransportInUse() { zerohop::share_detail::registerDeviceTransport(real); }
  FakeTransportInUse(const FakeTransportInUse&) = delete;
  FakeTransportInUse& operator=(const FakeTransportInUse&) = delete;
};

TEST_F(CApi, ADeviceFramesSemaphoreIsSignalledAfterItsReadyEventAndAHostFrameHasNoneToSignal) {
  FakeTransportInUse use;  // device rings without a GPU (tests/share)
  zerohop::share_test::FakeDeviceTransport& fake = use.fake;

  zh_publisher_options po = hostImages();
  po.memory = ZH_MEMORY_DEVICE;
  zh_publisher* pub = nullptr;
  ASSERT_EQ(zh_publisher_create(name_.c_str(), &po, &pub), ZH_OK) << zh_last_error();
  zh_reader* reader = nullptr;
  const auto ro = readerOptions();
  ASSERT_EQ(zh_reader_open_with(name_.c_str(), &ro, &reader), ZH_OK) << zh_last_error();
  zh_slot* slot = nullptr;
  ASSERT_EQ(zh_publisher_acquire(pub, &slot), ZH_OK) << zh_last_error();
  zh_frame_meta meta = ZH_FRAME_META_INIT;
  meta.sequence = 1;
  int streamToken = 0;  // the fake's stand-in for the stream that wrote the slot
  ASSERT_EQ(zh_publisher_commit(pub, slot, &meta, &streamToken), ZH_OK) << zh_last_error();
  zh_frame* frame = nullptr;
  ASSERT_EQ(zh_reader_next(reader, 1000, &frame), ZH_OK) << zh_last_error();
  zh_frame_info info = ZH_FRAME_INFO_INIT;
  ASSERT_EQ(zh_frame_get_info(frame, &info), ZH_OK);
  ASSERT_EQ(info.memory, ZH_MEMORY_DEVICE);
  EXPECT_EQ(zh_frame_get_ring_memory(frame, nullptr, nullptr, nullptr, nullptr, nullptr), ZH_ERR_NOT_FOUND)
      << "a reader in the publisher's process reads its pointers: no fd";

  int p[2];
  ASSERT_EQ(::pipe2(p, O_CLOEXEC), 0);
  zh_ready_semaphore* sem = nullptr;
  ASSERT_EQ(zh_ready_semaphore_import(p[1], 1, info.cuda_device, &sem), ZH_OK) << zh_last_error();
  EXPECT_FALSE(writeEndClosed(p[0]));
  ASSERT_EQ(zh_frame_signal_when_ready(frame, sem, 41), ZH_OK) << zh_last_error();
  {
    const std::lock_guard lock(fake.signalsMutex);
    ASSERT_EQ(fake.signals.size(), 1u);
    EXPECT_EQ(fake.signals[0].event, info.cuda_event);
    EXPECT_EQ(fake.signals[0].value, 41u);
    EXPECT_TRUE(fake.signals[0].timeline);
  }
  zh_ready_semaphore* other = nullptr;
  int q[2];
  ASSERT_EQ(::pipe2(q, O_CLOEXEC), 0);
  ASSERT_EQ(zh_ready_semaphore_import(q[1], 0, info.cuda_device + 1, &other), ZH_OK) << zh_last_error();
  EXPECT_EQ(zh_frame_signal_when_ready(frame, other, 1), ZH_ERR_INVALID_ARGUMENT);
  EXPECT_NE(std::string(zh_last_error()).find("imported on CUDA device"), std::string::npos)
      << zh_last_error();
  EXPECT_EQ(zh_ready_semaphore_destroy(other), ZH_OK);
  EXPECT_TRUE(writeEndClosed(q[0]));
  EXPECT_EQ(zh_ready_semaphore_destroy(other), ZH_ERR_INVALID_ARGUMENT) << "destroyed twice";
  ::close(q[0]);

  EXPECT_EQ(zh_frame_release(frame), ZH_OK);
  EXPECT_EQ(zh_ready_semaphore_destroy(sem), ZH_OK);
  EXPECT_TRUE(writeEndClosed(p[0]));
  ::close(p[0]);
  EXPECT_EQ(zh_reader_close(reader), ZH_OK);
  EXPECT_EQ(zh_publisher_close(pub), ZH_OK);
}

// The next frame read before it exists: the publisher signals the reader's semaphore with each publish
// index and says which slot comes next; confirm leases the slot if it holds that publish.
TEST_F(CApi, ThePublisherSignalsTheNextFrameAndConfirmLeasesIt) {
  FakeTransportInUse use;  // device rings without a GPU (tests/share)
  zerohop::share_test::FakeDeviceTransport& fake = use.fake;

  zh_publisher_options po = hostImages();
  po.memory = ZH_MEMORY_DEVICE;
  zh_publisher* pub = nullptr;
  ASSERT_EQ(zh_publisher_create(name_.c_str(), &po, &pub), ZH_OK) << zh_last_error();
  int streamToken = 0;
  const auto publish = [&](std::uint64_t seq) {
    zh_slot* slot = nullptr;
    ASSERT_EQ(zh_publisher_acquire(pub, &slot), ZH_OK) << zh_last_error();
    zh_frame_meta meta = ZH_FRAME_META_INIT;
    meta.sequence = seq;
    ASSERT_EQ(zh_publisher_commit(pub, slot, &meta, &streamToken), ZH_OK) << zh_last_error();
  };
  publish(1);
  zh_reader* reader = nullptr;
  const auto ro = readerOptions();
  ASSERT_EQ(zh_reader_open_with(name_.c_str(), &ro, &reader), ZH_OK) << zh_last_error();
  int p[2];
  ASSERT_EQ(::pipe2(p, O_CLOEXEC), 0);
  ASSERT_EQ(zh_reader_signal_on_publish(reader, p[1]), ZH_OK) << zh_last_error();
  std::uint64_t index = 0, offset = 0;
  std::uint32_t slot = 99;
  ASSERT_EQ(zh_reader_upcoming(reader, &index, &slot, &offset), ZH_OK) << zh_last_error();
  EXPECT_EQ(index, 2u);
  publish(2);
  zh_frame* frame = nullptr;
  EXPECT_EQ(zh_reader_confirm(reader, index, (slot + 1) % 4, &frame), ZH_ERR_NOT_FOUND) << "another slot";
  EXPECT_EQ(frame, nullptr);
  ASSERT_EQ(zh_reader_confirm(reader, index, slot, &frame), ZH_OK) << zh_last_error();
  zh_frame_info info = ZH_FRAME_INFO_INIT;
  ASSERT_EQ(zh_frame_get_info(frame, &info), ZH_OK);
  EXPECT_EQ(info.sequence, 2u);
  {
    const std::lock_guard lock(fake.signalsMutex);
    ASSERT_EQ(fake.signals.size(), 1u) << "one signal: publish 2, after the registration";
    EXPECT_EQ(fake.signals[0].value, 2u);
    EXPECT_EQ(fake.signals[0].stream, &streamToken) << "on the producer's stream, after its write";
  }
  EXPECT_EQ(zh_frame_release(frame), ZH_OK);
  EXPECT_EQ(zh_reader_close(reader), ZH_OK);
  EXPECT_EQ(zh_publisher_close(pub), ZH_OK);
  EXPECT_TRUE(writeEndClosed(p[0])) << "the publisher let the semaphore go with the reader";
  ::close(p[0]);

  // A host ring: nothing to signal, nothing announced.
  zh_publisher_options ho = hostImages();
  ASSERT_EQ(zh_publisher_create(name_.c_str(), &ho, &pub), ZH_OK) << zh_last_error();
  ASSERT_EQ(zh_reader_open_with(name_.c_str(), &ro, &reader), ZH_OK) << zh_last_error();
  ASSERT_EQ(::pipe2(p, O_CLOEXEC), 0);
  EXPECT_EQ(zh_reader_signal_on_publish(reader, p[1]), ZH_ERR_UNSUPPORTED);
  EXPECT_TRUE(writeEndClosed(p[0]));
  ::close(p[0]);
  EXPECT_EQ(zh_reader_upcoming(reader, nullptr, nullptr, nullptr), ZH_ERR_NOT_FOUND);
  EXPECT_EQ(zh_reader_close(reader), ZH_OK);
  EXPECT_EQ(zh_publisher_close(pub), ZH_OK);
}

}  // namespace
