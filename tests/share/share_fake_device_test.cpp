// Device-mode protocol across real processes WITHOUT a GPU: the same code paths as CUDA IPC (the
// 2-descriptor Welcome, DeviceSlots/DeviceEvents, device sessions, the drain before freeing, the
// refusals), with the host-memory fake transport of fake_device_transport.hpp at the edge.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <poll.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <stdexcept>
#include <thread>

#include "beside_program.hpp"
#include "fake_device_transport.hpp"
#include "share_test_support.hpp"
#include "zerohop/error.hpp"
#include "zerohop/share.hpp"

namespace zerohop {
namespace {

using namespace std::chrono_literals;
using share_test::checkPattern;
using share_test::Child;
using share_test::fillPattern;
using share_test::testLayout;

const std::string kPeer = zerohop::testing::besideProgram(ZEROHOP_SHARE_PEER);

class ShareFakeDevice : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/zerohop-share-fakedev-XXXXXX";
    ASSERT_NE(::mkdtemp(tmpl), nullptr);
    dir_ = tmpl;
    name_ = ::testing::UnitTest::GetInstance()->current_test_info()->name();
    share_detail::registerDeviceTransport(&fake_);
  }
  void TearDown() override {
    stop_ = true;
    if (producer_.joinable()) producer_.join();
    share_detail::registerDeviceTransport(nullptr);
    std::filesystem::remove_all(dir_);
  }
  ShareOptions options() const {
    ShareOptions o;
    o.directory = dir_;
    return o;
  }
  std::vector<std::string> peer(std::initializer_list<std::string> args) const {
    std::vector<std::string> v{kPeer, "--fake-device"};
    v.insert(v.end(), args);
    return v;
  }
  /// Writes pattern frames in place into the ("device") slots and commits them with a stream token.
  /// Stops the producer when it goes out of scope. Declared after the Publisher it feeds, it ends
  /// the thread before that Publisher is destroyed (TearDown runs only after the test's locals are gone).
  struct ProducerStop {
    ShareFakeDevice* fixture;
    ~ProducerStop() { fixture->stopPublishing(); }
  };
  void stopPublishing() {
    stop_ = true;
    if (producer_.joinable()) producer_.join();
  }

  [[nodiscard]] ProducerStop startPublishing(Publisher& pub) {
    producer_ = std::thread([this, &pub] {
      int streamToken = 0;
      for (std::uint64_t seq = 1; !stop_; ++seq) {
        WriteSlot ws = pub.acquireWrite();
        ws.frame().sequence = seq;
        fillPattern(ws.frame(), layout_);  // host-mapped in the fake
        Frame meta;
        meta.sequence = seq;
        pub.commit(std::move(ws), meta, &streamToken);
        std::this_thread::sleep_for(1ms);
      }
    });
    return ProducerStop{this};
  }

  /// A reader process (the fake transport) verifies `frames` frames: "ok verified=N", exit 0.
  void expectReaderProcessVerifies(int frames) {
    // A reader starved of CPU on a loaded CI box may see overwritten frames (reported invalid, never
    // torn-and-valid): allow any number of those; the valid frames must all verify.
    Child reader(peer({"read", name_, dir_, std::to_string(frames), "1000000"}));
    const auto line = reader.readLine(60s);
    ASSERT_TRUE(line);
    EXPECT_EQ(line->rfind("ok verified=" + std::to_string(frames), 0), 0u) << *line;
    EXPECT_EQ(reader.wait(), 0);
  }

  share_test::FakeDeviceTransport fake_;
  ImageLayout layout_ = testLayout();
  std::string dir_, name_;
  std::atomic<bool> stop_{false};
  std::thread producer_;
};

TEST_F(ShareFakeDevice, ReaderProcessGetsDeviceFramesWithReadyEventsInOrder) {
  Publisher pub(name_, SlotLayout::deviceImages(layout_, 8), options());
  EXPECT_EQ(fake_.slotsAlive.load(), 1);
  const auto producing = startPublishing(pub);
  expectReaderProcessVerifies(150);
}

// The kCudaVmmFd protocol: the allocation's fd travels with the DeviceSlots message (SCM_RIGHTS) and
// the reader process maps what it received (the fake stands in for cuMemImportFromShareableHandle).
TEST_F(ShareFakeDevice, VmmFdTravelsWithTheSlotsMessageToAReaderProcess) {
  ShareOptions o = options();
  o.deviceExport = ShareOptions::DeviceExport::kVmmFd;
  Publisher pub(name_, SlotLayout::deviceImages(layout_, 8), o);
  const auto producing = startPublishing(pub);
  expectReaderProcessVerifies(100);
  SubscribeOptions so;
  so.directory = dir_;
  Subscriber inProcess(name_, so);
  EXPECT_EQ(inProcess.info().transport, "cuda-vmm-fd");
  EXPECT_TRUE(inProcess.info().inProcess);
}

// A reader process of a kCudaVmmFd ring keeps its own dup() of the allocation fd for renderers
// (SharedFrame::deviceMemory()): mapping it (Vulkan imports it on a GPU; the fake's fd is a memfd)
// shows the frame's bytes at slotOffset. Legacy-IPC and in-process rings have no fd to give.
TEST_F(ShareFakeDevice, VmmFdRingGivesReadersTheRingMemoryFdAndSlotOffset) {
  ShareOptions o = options();
  o.deviceExport = ShareOptions::DeviceExport::kVmmFd;
  Publisher pub(name_, SlotLayout::deviceImages(layout_, 8), o);
  const auto producing = startPublishing(pub);
  Child reader(peer({"ring-memory", name_, dir_}));
  const auto line = reader.readLine(60s);
  ASSERT_TRUE(line);
  EXPECT_EQ(line->rfind("ring-memory stride=", 0), 0u) << *line;
  unsigned long long stride = 0, offset = 0;
  ASSERT_EQ(std::sscanf(line->c_str(), "ring-memory stride=%llu offset=%llu", &stride, &offset), 2) << *line;
  EXPECT_GE(stride, layout_.totalBytes);
  EXPECT_EQ(offset % stride, 0u) << "a slot starts at slot x stride";
  EXPECT_LT(offset / stride, 8u);
  // A frame overwritten while it was compared (a starved reader) may differ; an intact one must match.
  if (line->find("valid=1") != std::string::npos) {
    EXPECT_NE(line->find("same-bytes=1"), std::string::npos) << *line;
  }
  EXPECT_EQ(reader.wait(), 0);
  SubscribeOptions so;
  so.directory = dir_;
  Subscriber inProcess(name_, so);
  auto f = inProcess.next(10s);
  ASSERT_TRUE(f);
  EXPECT_FALSE(f->deviceMemory()) << "an in-process reader uses the publisher's pointers: no fd";
}

TEST_F(ShareFakeDevice, LegacyIpcRingGivesReadersNoRingMemoryFd) {
  Publisher pub(name_, SlotLayout::deviceImages(layout_, 8), options());
  const auto producing = startPublishing(pub);
  Child reader(peer({"ring-memory", name_, dir_}));
  const auto line = reader.readLine(60s);
  ASSERT_TRUE(line);
  EXPECT_EQ(*line, "no-ring-memory");
  EXPECT_EQ(reader.wait(), 0);
}

TEST_F(ShareFakeDevice, ReaderWithoutTheTransportIsRefusedWithTheCudaMessage) {
  Publisher pub(name_, SlotLayout::deviceImages(layout_, 3), options());
  Child reader({kPeer, "connect", name_, dir_});  // no --fake-device: "built without CUDA"
  const auto line = reader.readLine(20s);
  ASSERT_TRUE(line);
  EXPECT_NE(line->find("error unsupported"), std::string::npos) << *line;
  EXPECT_NE(line->find("this reader was built without CUDA; publisher '" + name_ + "' shares device memory"),
            std::string::npos)
      << *line;
  EXPECT_EQ(reader.wait(), 2);
  EXPECT_EQ(pub.stats().rejectedClients, 1u);
}

TEST_F(ShareFakeDevice, ClosingWaitsForAnActiveReaderToLetGoThenFrees) {
  auto pub = std::make_unique<Publisher>(name_, SlotLayout::deviceImages(layout_, 4), options());
  const auto producing = startPublishing(*pub);
  Child reader(peer({"read", name_, dir_, "100000000"}));
  const auto deadline = std::chrono::steady_clock::now() + 20s;
  while (pub->stats().readersConnected == 0 && std::chrono::steady_clock::now() < deadline)
    std::this_thread::sleep_for(5ms);
  ASSERT_EQ(pub->stats().readersConnected, 1u);
  stopPublishing();
  const auto t0 = std::chrono::steady_clock::now();
  pub.reset();
  EXPECT_LT(std::chrono::steady_clock::now() - t0, 1500ms);
  EXPECT_EQ(fake_.slotsAlive.load(), 0) << "the slots are freed once the reader let go";
  const auto line = reader.readLine(10s);
  ASSERT_TRUE(line);
  EXPECT_NE(line->find("went away"), std::string::npos) << *line;
  EXPECT_EQ(reader.wait(), 2);
}

TEST_F(ShareFakeDevice, ClosingGivesUpOnAReaderThatNeverLooksAfterTheDrainTimeout) {
  ShareOptions o = options();
  o.deviceDrainTimeout = 300ms;
  auto pub = std::make_unique<Publisher>(name_, SlotLayout::deviceImages(layout_, 4), o);
  const auto producing = startPublishing(*pub);
  Child holder(peer({"hold", name_, dir_}));  // leases one frame, then never calls the library again
  const auto leased = holder.readLine(20s);
  ASSERT_TRUE(leased);
  ASSERT_EQ(leased->rfind("leased ", 0), 0u) << *leased;
  stopPublishing();
  const auto t0 = std::chrono::steady_clock::now();
  pub.reset();
  const auto took = std::chrono::steady_clock::now() - t0;
  EXPECT_GE(took, 250ms) << "the publisher must wait for a reader that still maps the slots";
  EXPECT_LT(took, 2s);
  EXPECT_EQ(fake_.slotsAlive.load(), 0);
}

TEST_F(ShareFakeDevice, ReaderKilledMidLeaseIsDroppedAndTheRingGoesOn) {
  Publisher pub(name_, SlotLayout::deviceImages(layout_, 8), options());
  const auto producing = startPublishing(pub);
  Child holder(peer({"hold", name_, dir_}));
  ASSERT_TRUE(holder.readLine(20s));
  EXPECT_EQ(pub.stats().readersConnected, 1u);
  holder.kill();
  const auto deadline = std::chrono::steady_clock::now() + 1s;
  while (pub.stats().readersConnected != 0 && std::chrono::steady_clock::now() < deadline)
    std::this_thread::sleep_for(2ms);
  EXPECT_EQ(pub.stats().readersConnected, 0u);
  EXPECT_EQ(pub.stats().leasedSlots, 0u);
  Child reader(peer({"read", name_, dir_, "50", "1000000"}));
  const auto line = reader.readLine(60s);
  ASSERT_TRUE(line);
  EXPECT_EQ(line->rfind("ok verified=50", 0), 0u) << *line;
}

// In-process readers (threads of the publisher's process): no IPC handles, the publisher's own
// "device" pointers; the same handshake, seqlock, leases and overrun rules as other processes.
TEST_F(ShareFakeDevice, InProcessReaderThreadsReadThePublishersOwnSlots) {
  Publisher pub(name_, SlotLayout::deviceImages(layout_, 8), options());
  std::uint8_t* const base = fake_.lastSlotsBase.load();
  const std::size_t ringBytes = (layout_.totalBytes + 4095) / 4096 * 4096 * 8;
  const auto producing = startPublishing(pub);
  constexpr int kReaders = 3, kFrames = 100;
  std::vector<int> verified(kReaders, 0);
  const auto errors = share_test::runThreads(kReaders, [&](int t) {
    SubscribeOptions so;
    so.directory = dir_;
    Subscriber sub(name_, so);
    if (!sub.info().inProcess || sub.info().memory != MemoryKind::kDevice)
      throw std::runtime_error("not an in-process device subscription");
    std::uint64_t last = 0;
    for (int tries = 0; verified[t] < kFrames && tries < 100 * kFrames; ++tries) {
      auto f = sub.next(2s);
      if (!f) continue;
      const Frame& fr = f->frame();
      if (fr.memory != MemoryKind::kDevice || !fr.gpu.readyEvent)
        throw std::runtime_error("frame is not a device frame with a ready event");
      if (fr.data[0] < base || fr.data[0] >= base + ringBytes)
        throw std::runtime_error("frame does not point into the publisher's own slots");
      if (f->publishIndex() <= last) throw std::runtime_error("publish index did not rise");
      last = f->publishIndex();
      const std::string bad = checkPattern(fr, layout_);
      if (!f->valid()) continue;  // overwritten while read: reported, never returned as good
      if (!bad.empty()) throw std::runtime_error("torn frame reported valid: " + bad);
      ++verified[t];
    }
  });
  for (int t = 0; t < kReaders; ++t) {
    EXPECT_TRUE(errors[t].empty()) << "reader " << t << ": " << errors[t];
    EXPECT_EQ(verified[t], kFrames) << "reader " << t;
  }
}

TEST_F(ShareFakeDevice, InProcessLeasesAreSparedAndOverrunsAreReported) {
  Publisher pub(name_, SlotLayout::deviceImages(layout_, 3), options());
  SubscribeOptions so;
  so.directory = dir_;
  Subscriber sub(name_, so);
  ASSERT_TRUE(sub.info().inProcess);
  int token = 0;
  auto publishOne = [&](std::uint64_t seq) {
    WriteSlot ws = pub.acquireWrite();
    ws.frame().sequence = seq;
    fillPattern(ws.frame(), layout_);
    Frame meta;
    meta.sequence = seq;
    pub.commit(std::move(ws), meta, &token);
  };
  publishOne(1);
  auto held = sub.latest();
  ASSERT_TRUE(held);
  EXPECT_EQ(pub.stats().leasedSlots, 1u);
  for (std::uint64_t seq = 2; seq <= 10; ++seq) publishOne(seq);
  EXPECT_TRUE(held->valid()) << "a leased slot is spared while other slots are free";
  EXPECT_EQ(checkPattern(held->frame(), layout_), "");
  EXPECT_GT(pub.stats().leaseSkips, 0u);
  // Lease the two other slots too: the publisher never waits, it overwrites the oldest lease.
  auto second = sub.latest();
  publishOne(11);
  auto third = sub.latest();
  ASSERT_TRUE(second && third);
  publishOne(12);
  EXPECT_EQ(pub.stats().overruns, 1u);
  EXPECT_FALSE(held->valid()) << "the overwritten lease is reported, never returned as good";
  EXPECT_EQ(sub.stats().overruns, 1u);
}

TEST_F(ShareFakeDevice, ClosingDoesNotWaitForInProcessReadersAndTheirFramesStayValid) {
  auto pub = std::make_unique<Publisher>(name_, SlotLayout::deviceImages(layout_, 4), options());
  SubscribeOptions so;
  so.directory = dir_;
  Subscriber sub(name_, so);
  ASSERT_TRUE(sub.info().inProcess);
  {
    int token = 0;
    WriteSlot ws = pub->acquireWrite();
    ws.frame().sequence = 5;
    fillPattern(ws.frame(), layout_);
    Frame meta;
    meta.sequence = 5;
    pub->commit(std::move(ws), meta, &token);
  }
  auto f = sub.next(1s);
  ASSERT_TRUE(f);
  const auto t0 = std::chrono::steady_clock::now();
  pub.reset();  // the drain waits for other processes only: this reader holds the slots itself
  EXPECT_LT(std::chrono::steady_clock::now() - t0, 500ms);
  EXPECT_EQ(fake_.slotsAlive.load(), 1) << "the in-process frame keeps the slots alive";
  EXPECT_EQ(checkPattern(f->frame(), layout_), "");
  EXPECT_THROW(sub.next(100ms), Error);  // publisher gone: kUnavailable, the session is dropped
  f.reset();
  EXPECT_EQ(fake_.slotsAlive.load(), 0) << "freed with the last in-process frame";
}

TEST_F(ShareFakeDevice, DeviceCommitWithoutOrderingIsRefusedAndPublishesNothing) {
  Publisher pub(name_, SlotLayout::deviceImages(layout_, 3), options());
  WriteSlot ws = pub.acquireWrite();
  EXPECT_EQ(ws.frame().memory, MemoryKind::kDevice);
  EXPECT_THROW(pub.commit(std::move(ws), Frame{}), Error);
  EXPECT_EQ(pub.stats().publishes, 0u);
  // The abandoned slot is reusable.
  WriteSlot again = pub.acquireWrite();
  Frame meta;
  meta.sequence = 7;
  int token = 0;
  meta.gpu.readyEvent = &token;
  pub.commit(std::move(again), meta);
  EXPECT_EQ(pub.stats().publishes, 1u);
}

TEST_F(ShareFakeDevice, EncodedAndOversizedDeviceRingsAreInvalid) {
  EXPECT_THROW(Publisher(
                   name_,
                   [] {
                     auto l = SlotLayout::encoded(PixelFormat::kH264, 4096, 3);
                     l.memory = MemoryKind::kDevice;
                     return l;
                   }(),
                   options()),
               Error);
  EXPECT_THROW(Publisher(name_ + "-big", SlotLayout::deviceImages(layout_, 49), options()), Error);
}

/// A pipe whose write end stands in for a renderer's semaphore fd: closed (by whoever owns it) once
/// the read end polls as hung up.
struct FdProbe {
  int read = -1, write = -1;
  FdProbe() {
    int fds[2];
    if (::pipe2(fds, O_CLOEXEC) != 0) throw std::runtime_error("pipe2");
    read = fds[0];
    write = fds[1];
  }
  ~FdProbe() { ::close(read); }
  bool writeEndClosed() const {
    pollfd p{read, POLLIN, 0};
    return ::poll(&p, 1, 0) == 1 && (p.revents & POLLHUP) != 0;
  }
};

/// One device frame committed in place and read back by an in-process reader.
SharedFrame oneDeviceFrame(Publisher& pub, const std::string& name, const std::string& dir) {
  WriteSlot ws = pub.acquireWrite();
  Frame meta;
  meta.sequence = 1;
  static int streamToken = 0;
  pub.commit(std::move(ws), meta, &streamToken);
  SubscribeOptions so;
  so.directory = dir;
  Subscriber sub(name, so);
  std::optional<SharedFrame> f = sub.latest();
  if (!f) throw std::runtime_error("no frame");
  return std::move(*f);
}

TEST_F(ShareFakeDevice, ReadySemaphoreIsSignalledAfterTheFramesReadyEvent) {
  Publisher pub(name_, SlotLayout::deviceImages(layout_, 3), options());
  SharedFrame f = oneDeviceFrame(pub, name_, dir_);
  ASSERT_EQ(f->memory, MemoryKind::kDevice);
  ASSERT_NE(f->gpu.readyEvent, nullptr);
  FdProbe fd;
  ReadySemaphore sem(fd.write, ReadySemaphore::Kind::kTimeline, f->gpu.device);
  EXPECT_FALSE(fd.writeEndClosed()) << "the import owns the fd while it lives";
  f.signalWhenReady(sem, 7);
  f.signalWhenReady(sem, 8);
  {
    const std::lock_guard lock(fake_.signalsMutex);
    ASSERT_EQ(fake_.signals.size(), 2u);
    EXPECT_EQ(fake_.signals[0].event, f->gpu.readyEvent) << "ordered after this frame's write, not another's";
    EXPECT_EQ(fake_.signals[0].value, 7u);
    EXPECT_EQ(fake_.signals[1].value, 8u);
    EXPECT_TRUE(fake_.signals[0].timeline);
    EXPECT_EQ(fake_.signals[0].device, f->gpu.device);
  }
  sem = ReadySemaphore();
  EXPECT_TRUE(fd.writeEndClosed()) << "destroying the semaphore destroys the import and its fd";
}

TEST_F(ShareFakeDevice, SignalWhenReadyRefusesWrongDeviceReleasedFrameEmptySemaphore) {
  Publisher pub(name_, SlotLayout::deviceImages(layout_, 3), options());
  SharedFrame f = oneDeviceFrame(pub, name_, dir_);
  FdProbe fd;
  ReadySemaphore other(fd.write, ReadySemaphore::Kind::kBinary, f->gpu.device + 1);
  try {
    f.signalWhenReady(other, 1);
    FAIL() << "a semaphore of another device was signalled";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), Errc::kInvalidArgument);
    EXPECT_NE(std::string(e.what()).find("imported on CUDA device " + std::to_string(f->gpu.device + 1)),
              std::string::npos)
        << e.what();
  }
  ReadySemaphore empty;
  EXPECT_THROW(f.signalWhenReady(empty, 1), Error);
  f.release();
  EXPECT_THROW(f.signalWhenReady(other, 1), Error);
  const std::lock_guard lock(fake_.signalsMutex);
  EXPECT_TRUE(fake_.signals.empty());
}

TEST_F(ShareFakeDevice, ARefusedSemaphoreIsSaidAndItsFdClosed) {
  fake_.refuseSemaphores = true;
  FdProbe refused;
  try {
    ReadySemaphore sem(refused.write, ReadySemaphore::Kind::kTimeline, 0);
    FAIL() << "the refused import made a semaphore";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), Errc::kDevice);
    EXPECT_NE(std::string(e.what()).find("cudaImportExternalSemaphore"), std::string::npos) << e.what();
  }
  EXPECT_TRUE(refused.writeEndClosed()) << "a refused fd is closed, not leaked";

  share_detail::registerDeviceTransport(nullptr);  // a process without zerohop's CUDA transport
  FdProbe none;
  try {
    ReadySemaphore sem(none.write, ReadySemaphore::Kind::kTimeline, 0);
    FAIL() << "a semaphore was imported without a CUDA transport";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), Errc::kUnsupported);
    EXPECT_NE(std::string(e.what()).find("no CUDA device transport"), std::string::npos) << e.what();
  }
  EXPECT_TRUE(none.writeEndClosed());
}

// Subscriber::signalOnPublish: the reader's semaphore goes to the publisher, whose GPU signals it to each
// publish index after that frame's write (its slot event); upcoming() says which slot and index come
// next, and confirm() whether the slot then held that frame.
TEST_F(ShareFakeDevice, PublisherSignalsEachPublishAndSaysTheNextSlot) {
  Publisher pub(name_, SlotLayout::deviceImages(layout_, 4), options());
  static int streamToken = 0;
  const auto publish = [&](std::uint64_t seq) {
    WriteSlot ws = pub.acquireWrite();
    Frame meta;
    meta.sequence = seq;
    pub.commit(std::move(ws), meta, &streamToken);
  };
  publish(1);
  SubscribeOptions so;
  so.directory = dir_;
  Subscriber sub(name_, so);
  FdProbe fd;
  sub.signalOnPublish(fd.write);
  EXPECT_FALSE(fd.writeEndClosed()) << "the publisher's import holds the semaphore";
  std::optional<UpcomingFrame> first;
  for (std::uint64_t k = 2; k <= 6; ++k) {
    const std::optional<UpcomingFrame> u = sub.upcoming();
    ASSERT_TRUE(u) << "publish " << k;
    EXPECT_EQ(u->publishIndex, k);
    if (!first) first = u;
    publish(k);
    std::optional<SharedFrame> f = sub.confirm(*u);
    ASSERT_TRUE(f) << "publish " << k << " went to another slot than announced (" << u->slot << ")";
    EXPECT_EQ(f->publishIndex(), k);
    const std::lock_guard lock(fake_.signalsMutex);
    ASSERT_FALSE(fake_.signals.empty());
    const auto& last = fake_.signals.back();
    EXPECT_EQ(last.value, k) << "the publish index";
    EXPECT_TRUE(last.timeline);
    EXPECT_EQ(last.stream, &streamToken) << "on the producer's stream, right after its write of the frame";
  }
  {
    const std::lock_guard lock(fake_.signalsMutex);
    EXPECT_EQ(fake_.signals.size(), 5u) << "one signal a publish after the registration";
  }
  EXPECT_FALSE(sub.confirm(*first)) << "publish 2's slot has been written again since";
  EXPECT_FALSE(sub.next(0ms)) << "next() goes on after the frames confirm() returned";
  sub = Subscriber(name_, so);  // the first session ends: the publisher lets its semaphore go
  const auto until = std::chrono::steady_clock::now() + 5s;
  while (!fd.writeEndClosed() && std::chrono::steady_clock::now() < until) std::this_thread::sleep_for(5ms);
  EXPECT_TRUE(fd.writeEndClosed()) << "the publisher kept a gone reader's semaphore";
}

// A publisher stalled while it imports a semaphore (its socket thread blocked): the request times out
// as kUnavailable (it answered one before), and its late answer, when it comes, is not taken for the
// next request's: that one gets its own (here a refusal), and the one after that its own again.
TEST_F(ShareFakeDevice, AStalledPublishersLateAnswerIsNotTakenForTheNextRequest) {
  Publisher pub(name_, SlotLayout::deviceImages(layout_, 3), options());
  SubscribeOptions so;
  so.directory = dir_;
  so.handshakeTimeout = 200ms;
  Subscriber sub(name_, so);
  FdProbe first;
  sub.signalOnPublish(first.write);  // answered: this publisher speaks Signal

  fake_.importDelayMs = 1000;
  FdProbe late;
  const int importsBefore = fake_.importsDone;
  const auto asked = std::chrono::steady_clock::now();
  try {
    sub.signalOnPublish(late.write);
    FAIL() << "a publisher blocked for 1 s answered within 200 ms";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), Errc::kUnavailable) << e.what();
    EXPECT_NE(std::string(e.what()).find("stalled"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("published no frame meanwhile"), std::string::npos) << e.what();
  }
  EXPECT_LT(std::chrono::steady_clock::now() - asked, 900ms) << "bounded by the handshake timeout";
  fake_.importDelayMs = 0;
  fake_.refuseSemaphores = true;  // the next import fails; the late one (already past its check) succeeds
  const auto until = std::chrono::steady_clock::now() + 10s;
  while (fake_.importsDone == importsBefore && std::chrono::steady_clock::now() < until)
    std::this_thread::sleep_for(5ms);
  ASSERT_GT(fake_.importsDone, importsBefore) << "the stalled import never finished";

  FdProbe refused;
  try {
    sub.signalOnPublish(refused.write);
    FAIL() << "the late SignalOk was taken for this request's answer (its import was refused)";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), Errc::kDevice) << e.what();
  }
  fake_.refuseSemaphores = false;
  FdProbe last;
  sub.signalOnPublish(last.write);  // in step again: its own SignalOk
  EXPECT_FALSE(last.writeEndClosed()) << "the publisher holds the semaphore it answered for";
  const int notify = sub.pollFd();  // another kind of request, answered as its own
  EXPECT_GE(notify, 0);
}

TEST_F(ShareFakeDevice, SignalRefusedForHostRingOrByCuda) {
  {
    Publisher host(name_ + "_host", SlotLayout::images(layout_, 3), options());
    WriteSlot ws = host.acquireWrite();
    host.commit(std::move(ws), Frame{});
    SubscribeOptions so;
    so.directory = dir_;
    Subscriber sub(name_ + "_host", so);
    EXPECT_FALSE(sub.upcoming()) << "a host ring announces nothing";
    FdProbe fd;
    try {
      sub.signalOnPublish(fd.write);
      FAIL() << "a host ring took a semaphore";
    } catch (const Error& e) {
      EXPECT_EQ(e.code(), Errc::kUnsupported);
      EXPECT_NE(std::string(e.what()).find("host ring"), std::string::npos) << e.what();
    }
    EXPECT_TRUE(fd.writeEndClosed()) << "the refused fd is closed";
  }
  fake_.refuseSemaphores = true;
  Publisher pub(name_, SlotLayout::deviceImages(layout_, 3), options());
  SubscribeOptions so;
  so.directory = dir_;
  Subscriber sub(name_, so);
  FdProbe fd;
  try {
    sub.signalOnPublish(fd.write);
    FAIL() << "a semaphore CUDA refused was taken";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), Errc::kDevice);
    EXPECT_NE(std::string(e.what()).find("cudaImportExternalSemaphore"), std::string::npos) << e.what();
  }
  EXPECT_TRUE(fd.writeEndClosed()) << "neither side keeps a refused fd";
}

TEST_F(ShareFakeDevice, AHostFrameHasNothingToSignal) {
  ShareOptions o = options();
  Publisher pub(name_, SlotLayout::images(layout_, 3), o);
  WriteSlot ws = pub.acquireWrite();
  Frame meta;
  meta.sequence = 1;
  pub.commit(std::move(ws), meta);
  SubscribeOptions so;
  so.directory = dir_;
  Subscriber sub(name_, so);
  std::optional<SharedFrame> f = sub.latest();
  ASSERT_TRUE(f);
  ASSERT_EQ((*f)->memory, MemoryKind::kHost);
  FdProbe fd;
  ReadySemaphore sem(fd.write, ReadySemaphore::Kind::kTimeline, 0);
  try {
    f->signalWhenReady(sem, 1);
    FAIL() << "a host frame signalled";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), Errc::kInvalidArgument);
    EXPECT_NE(std::string(e.what()).find("complete at commit"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace zerohop
