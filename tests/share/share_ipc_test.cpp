// The share ring across real processes: share_peer children publish or read while this process
// plays the other side. Every test uses its own directory and name.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <poll.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <memory>
#include <optional>
#include <thread>
#include <vector>

#include "core/unique_fd.hpp"
#include "share/ring_layout.hpp"
#include "share/unix_socket.hpp"
#include "share/wire.hpp"
#include "share_test_support.hpp"
#include "zerohop/clock.hpp"
#include "zerohop/error.hpp"
#include "zerohop/share.hpp"

namespace zerohop {
namespace {

using namespace std::chrono_literals;
using share_test::checkPattern;
using share_test::Child;
using share_test::fillPattern;
using share_test::testLayout;

const std::string kPeer = ZEROHOP_SHARE_PEER;

class ShareIpc : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/zerohop-share-test-XXXXXX";
    ASSERT_NE(::mkdtemp(tmpl), nullptr);
    dir_ = tmpl;
    name_ = ::testing::UnitTest::GetInstance()->current_test_info()->name();
    storage_.resize(layout_.totalBytes);
    bindLayout(frame_, layout_, storage_.data(), MemoryKind::kHost);
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  ShareOptions shareOptions() const {
    ShareOptions o;
    o.directory = dir_;
    return o;
  }
  SubscribeOptions subscribeOptions() const {
    SubscribeOptions o;
    o.directory = dir_;
    return o;
  }
  void publishSeq(Publisher& pub, std::uint64_t seq) {
    frame_.sequence = seq;
    frame_.times.mark(Stage::kCapture, static_cast<std::int64_t>(seq) * 10);
    fillPattern(frame_, layout_);
    pub.publish(frame_);
  }
  std::vector<std::string> peer(std::initializer_list<std::string> args) const {
    std::vector<std::string> v{kPeer};
    v.insert(v.end(), args);
    return v;
  }
  std::string socketPath() const { return dir_ + "/" + name_ + ".sock"; }

  /// A raw client: connects, sends `bytes` (optionally with a descriptor), returns the publisher's answer.
  std::optional<share_detail::ReceivedMessage> rawExchange(const std::vector<std::uint8_t>& bytes,
                                                           int fd = -1) {
    auto sock = share_detail::connectSeqpacket(socketPath());
    if (!bytes.empty()) {
      if (fd >= 0) {
        const int fds[1] = {fd};
        share_detail::sendMessage(sock.get(), bytes, fds);
      } else {
        share_detail::sendMessage(sock.get(), bytes);
      }
    }
    return share_detail::receiveMessage(sock.get(), 10s);
  }

  /// Waits (bounded) until the publisher has seen `n` readers.
  bool waitForReaders(Publisher& pub, std::uint32_t n, std::chrono::milliseconds limit) {
    const auto deadline = std::chrono::steady_clock::now() + limit;
    while (pub.stats().readersConnected != n) {
      if (std::chrono::steady_clock::now() > deadline) return false;
      std::this_thread::sleep_for(1ms);
    }
    return true;
  }

  std::string dir_, name_;
  ImageLayout layout_ = testLayout();
  std::vector<std::uint8_t> storage_;
  Frame frame_;
};

TEST_F(ShareIpc, ThreeReaderProcessesSeeCorrectContentInRisingOrder) {
  Publisher pub(name_, SlotLayout::images(layout_, 8), shareOptions());
  std::atomic<bool> stop{false};
  std::thread producer([&] {
    for (std::uint64_t seq = 1; !stop; ++seq) {
      publishSeq(pub, seq);
      std::this_thread::sleep_for(500us);
    }
  });
  std::vector<std::unique_ptr<Child>> readers;
  for (int i = 0; i < 3; ++i) readers.push_back(std::make_unique<Child>(peer({"read", name_, dir_, "200"})));
  for (auto& r : readers) {
    const auto line = r->readLine(60s);
    ASSERT_TRUE(line) << "reader printed nothing";
    EXPECT_EQ(line->rfind("ok verified=200", 0), 0u) << *line;
    EXPECT_EQ(r->wait(), 0);
  }
  stop = true;
  producer.join();
  const auto s = pub.stats();
  EXPECT_GE(s.publishes, 200u);
  EXPECT_EQ(s.rejectedClients, 0u);
  EXPECT_TRUE(waitForReaders(pub, 0, 5s)) << "readers that exited must be forgotten";
}

TEST_F(ShareIpc, AFlatOutPublisherOnATinyRingNeverHandsOutATornFrameAsValid) {
  // Two slots and no pause between publishes: the reader's frame is overwritten again and again while
  // it checks every byte. Each frame it reads is either valid() with exactly the right content, or
  // reported invalid; a torn frame reported valid fails the reader ("content mismatch on a valid frame").
  Publisher pub(name_, SlotLayout::images(layout_, 2), shareOptions());
  std::atomic<bool> stop{false};
  std::thread producer([&] {
    for (std::uint64_t seq = 1; !stop; ++seq) publishSeq(pub, seq);
  });
  Child reader(peer({"read", name_, dir_, "300", "100000000"}));
  const auto line = reader.readLine(120s);
  stop = true;
  producer.join();
  ASSERT_TRUE(line);
  EXPECT_EQ(line->rfind("ok verified=300", 0), 0u) << *line;
  EXPECT_EQ(reader.wait(), 0);
  std::printf("flat-out reader: %s; publisher overran %llu leased slots\n", line->c_str(),
              static_cast<unsigned long long>(pub.stats().overruns));
}

TEST_F(ShareIpc, EncodedUnitsCrossProcessesWithKeyframesAndTimestamps) {
  Publisher pub(name_, SlotLayout::encoded(PixelFormat::kH264, 8192, 6), shareOptions());
  std::atomic<bool> stop{false};
  std::thread producer([&] {
    for (std::uint64_t seq = 1; !stop; ++seq) {
      EncodedUnit u;
      u.sequence = seq;
      u.keyframe = share_test::unitKeyframe(seq);
      u.bytes.resize(share_test::unitSize(seq));
      for (std::size_t i = 0; i < u.bytes.size(); ++i) u.bytes[i] = share_test::patternByte(seq, 0, i);
      u.times.mark(Stage::kEncode, static_cast<std::int64_t>(seq) * 1000);
      pub.publish(u);
      std::this_thread::sleep_for(500us);
    }
  });
  Child reader(peer({"read-encoded", name_, dir_, "100"}));
  const auto line = reader.readLine(60s);
  stop = true;
  producer.join();
  ASSERT_TRUE(line);
  EXPECT_EQ(line->rfind("ok verified=100", 0), 0u) << *line;
  EXPECT_EQ(reader.wait(), 0);
}

TEST_F(ShareIpc, OversizedUnitIsRefusedAndPublishesNothing) {
  Publisher pub(name_, SlotLayout::encoded(PixelFormat::kH264, 1000, 3), shareOptions());
  EncodedUnit u;
  u.bytes.resize(1001);
  try {
    pub.publish(u);
    ADD_FAILURE() << "an oversized unit was accepted";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), Errc::kInvalidArgument);
  }
  EXPECT_EQ(pub.stats().publishes, 0u);
}

TEST_F(ShareIpc, ReaderKilledMidLeaseCostsNothingAndItsSlotReturns) {
  ShareOptions o = shareOptions();
  o.leaseTimeout = 600s;  // the lease must not expire on a slow machine: this test is about release on death
  Publisher pub(name_, SlotLayout::images(layout_, 4), o);
  publishSeq(pub, 1);
  Child holder(peer({"hold", name_, dir_}));
  const auto leased = holder.readLine();
  ASSERT_TRUE(leased);
  ASSERT_EQ(*leased, "leased 1");
  // The lease protects its slot: 20 more publishes go round it.
  for (std::uint64_t seq = 2; seq <= 21; ++seq) publishSeq(pub, seq);
  auto s = pub.stats();
  EXPECT_EQ(s.leasedSlots, 1u);
  EXPECT_GT(s.leaseSkips, 0u);
  EXPECT_EQ(s.overruns, 0u);
  holder.writeLine("check");
  const auto check = holder.readLine();
  ASSERT_TRUE(check);
  EXPECT_EQ(*check, "still-valid") << "the leased frame must survive publishes around it";

  holder.kill();
  // A reader killed while holding a lease gives its slot back within one second.
  EXPECT_TRUE(waitForReaders(pub, 0, 1s));
  s = pub.stats();
  EXPECT_EQ(s.leasedSlots, 0u);
  const auto skipsBefore = s.leaseSkips;
  for (std::uint64_t seq = 22; seq <= 30; ++seq) publishSeq(pub, seq);
  s = pub.stats();
  EXPECT_EQ(s.leaseSkips, skipsBefore) << "no slot is protected any more";
  EXPECT_EQ(s.overruns, 0u);
  EXPECT_EQ(s.publishes, 30u);
}

TEST_F(ShareIpc, WhenEverySlotIsLeasedTheOldestIsOverwrittenAndTheReaderSeesIt) {
  ShareOptions o = shareOptions();
  o.leaseTimeout = 600s;  // leases stay live however slow the machine is
  Publisher pub(name_, SlotLayout::images(layout_, 2), o);
  Subscriber sub(name_, subscribeOptions());
  publishSeq(pub, 1);
  auto a = sub.latest();
  publishSeq(pub, 2);
  auto b = sub.latest();
  ASSERT_TRUE(a && b);
  EXPECT_EQ(a->frame().sequence, 1u);
  EXPECT_EQ(b->frame().sequence, 2u);
  EXPECT_TRUE(a->valid());
  publishSeq(pub, 3);  // both slots leased: the producer does not wait, it overwrites the oldest
  EXPECT_EQ(pub.stats().overruns, 1u);
  EXPECT_FALSE(a->valid()) << "an overwritten frame must never look valid";
  EXPECT_TRUE(b->valid());
  EXPECT_TRUE(checkPattern(b->frame(), layout_).empty());
  EXPECT_EQ(sub.stats().overruns, 1u);
  a->release();
  auto c = sub.latest();
  ASSERT_TRUE(c);
  EXPECT_EQ(c->frame().sequence, 3u);
  EXPECT_TRUE(checkPattern(c->frame(), layout_).empty());
  EXPECT_TRUE(c->valid());
}

TEST_F(ShareIpc, NextReturnsEveryFrameInOrderAndCountsMissedOnes) {
  Publisher pub(name_, SlotLayout::images(layout_, 4), shareOptions());
  Subscriber sub(name_, subscribeOptions());
  EXPECT_FALSE(sub.latest()) << "nothing published yet";
  EXPECT_FALSE(sub.next(1ms));
  publishSeq(pub, 10);
  publishSeq(pub, 11);
  auto f = sub.next(1s);
  ASSERT_TRUE(f);
  EXPECT_EQ(f->frame().sequence, 10u);
  EXPECT_EQ(f->frame().times.at(Stage::kCapture), 100);
  f = sub.next(1s);
  ASSERT_TRUE(f);
  EXPECT_EQ(f->frame().sequence, 11u);
  f.reset();
  for (std::uint64_t seq = 12; seq <= 20; ++seq) publishSeq(pub, seq);  // 4 slots: 12..16 are gone
  f = sub.next(1s);
  ASSERT_TRUE(f);
  EXPECT_EQ(f->frame().sequence, 17u);
  EXPECT_EQ(sub.stats().missed, 5u);
  EXPECT_TRUE(checkPattern(f->frame(), layout_).empty());
}

// SharedFrame::deviceMemory() is for renderers importing a device ring: a host ring has none to give.
TEST_F(ShareIpc, HostRingFramesHaveNoDeviceRingMemory) {
  Publisher pub(name_, SlotLayout::images(layout_, 4), shareOptions());
  Subscriber sub(name_, subscribeOptions());
  publishSeq(pub, 1);
  auto f = sub.next(1s);
  ASSERT_TRUE(f);
  EXPECT_FALSE(f->deviceMemory()) << "a host-memfd ring has no device memory fd";
  EXPECT_FALSE(SharedFrame{}.deviceMemory()) << "an empty SharedFrame has none either";
}

TEST_F(ShareIpc, PublishIsThreadSafe) {
  Publisher pub(name_, SlotLayout::images(layout_, 64), shareOptions());
  Subscriber sub(name_, subscribeOptions());
  constexpr int kThreads = 4, kEach = 12;
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      std::vector<std::uint8_t> storage(layout_.totalBytes);
      Frame f;
      bindLayout(f, layout_, storage.data(), MemoryKind::kHost);
      for (int i = 0; i < kEach; ++i) {
        f.sequence = static_cast<std::uint64_t>(t * 1000 + i);
        fillPattern(f, layout_);
        pub.publish(f);
      }
    });
  }
  for (auto& t : threads) t.join();
  EXPECT_EQ(pub.stats().publishes, static_cast<std::uint64_t>(kThreads * kEach));
  std::vector<int> perThread(kThreads, 0);
  std::uint64_t lastIndex = 0;
  while (auto f = sub.next(0ms)) {
    EXPECT_GT(f->publishIndex(), lastIndex);
    lastIndex = f->publishIndex();
    EXPECT_TRUE(checkPattern(f->frame(), layout_).empty()) << checkPattern(f->frame(), layout_);
    EXPECT_TRUE(f->valid());
    ++perThread[f->frame().sequence / 1000];
  }
  for (int t = 0; t < kThreads; ++t) EXPECT_EQ(perThread[t], kEach) << "thread " << t;
  EXPECT_EQ(sub.stats().missed, 0u);
}

TEST_F(ShareIpc, NextWakesUpWhenAnotherThreadPublishes) {
  Publisher pub(name_, SlotLayout::images(layout_, 4), shareOptions());
  Subscriber sub(name_, subscribeOptions());
  std::thread later([&] {
    std::this_thread::sleep_for(50ms);
    publishSeq(pub, 5);
  });
  auto f = sub.next(30s);
  later.join();
  ASSERT_TRUE(f);
  EXPECT_EQ(f->frame().sequence, 5u);
}

TEST_F(ShareIpc, NextHonoursItsTimeoutWithSpinAndWithAnticipation) {
  Publisher pub(name_, SlotLayout::images(layout_, 4), shareOptions());
  for (const auto anticipate : {std::chrono::microseconds{0}, std::chrono::microseconds{2000}}) {
    SubscribeOptions o = subscribeOptions();
    o.spinBeforeSleep = 200us;
    o.anticipate = anticipate;
    Subscriber sub(name_, o);
    const auto t0 = std::chrono::steady_clock::now();
    EXPECT_FALSE(sub.next(60ms));
    const auto took = std::chrono::steady_clock::now() - t0;
    EXPECT_GE(took, 60ms);
    EXPECT_LT(took, 1s);
    const auto z0 = std::chrono::steady_clock::now();
    EXPECT_FALSE(sub.next(0ms)) << "a zero timeout polls";
    // Returns without waiting for a frame: a bound far under the 60 ms wait above would only measure
    // preemption on a busy 2-core box under a sanitizer (50 ms was flaky there).
    EXPECT_LT(std::chrono::steady_clock::now() - z0, 250ms) << "a zero timeout waited";
  }
}

// A steady 200 Hz publisher: with anticipation, next() learns the period, sleeps until just before
// each frame is due and spins for it; every frame still arrives, in order, and a frame that comes
// late (a 30 ms gap) is still waited for (the spin gives up, the futex takes over).
TEST_F(ShareIpc, AnticipatingNextGetsEveryFrameOfASteadyPublisherAndSurvivesAGap) {
  // 64 slots: 320 ms of frames. With 8 (40 ms) a reader preempted on a busy 2-core box under a sanitizer
  // missed frames it would otherwise get; what this test checks is the waiting, not the ring's depth.
  Publisher pub(name_, SlotLayout::images(layout_, 64), shareOptions());
  // The default (spin 50 us, then futex) first, for the comparison printed at the end.
  for (const auto anticipate : {std::chrono::microseconds{0}, std::chrono::microseconds{1000}}) {
    SubscribeOptions o = subscribeOptions();
    o.anticipate = anticipate;
    Subscriber sub(name_, o);
    constexpr std::uint64_t kFrames = 120;
    const std::uint64_t first = pub.stats().publishes + 1;
    std::thread producer([&] {
      std::vector<std::uint8_t> storage(layout_.totalBytes);
      Frame f;
      bindLayout(f, layout_, storage.data(), MemoryKind::kHost);
      for (std::uint64_t seq = first; seq < first + kFrames; ++seq) {
        f.sequence = seq;
        fillPattern(f, layout_);
        pub.publish(f);
        std::this_thread::sleep_for(seq == first + kFrames / 2 ? 30ms : 5ms);
      }
    });
    std::vector<std::int64_t> lateUs;
    std::uint64_t expected = first;
    while (expected < first + kFrames) {
      auto f = sub.next(2s);
      if (!f) break;
      if (f->frame().sequence < first) continue;  // a new subscriber starts with the newest frame
      lateUs.push_back((monotonicNs() - f->publishNs()) / 1000);
      EXPECT_EQ(f->frame().sequence, expected);
      EXPECT_TRUE(checkPattern(f->frame(), layout_).empty());
      expected = f->frame().sequence + 1;
    }
    producer.join();
    EXPECT_EQ(expected, first + kFrames)
        << "every frame arrives (anticipate " << anticipate.count() << " us)";
    EXPECT_EQ(sub.stats().missed, 0u);
    std::sort(lateUs.begin(), lateUs.end());
    if (!lateUs.empty()) {
      std::printf(
          "next() at 200 Hz, anticipate %lld us: publish -> returned p50 %lld us, p99 %lld us "
          "(preliminary, shared CPU)\n",
          static_cast<long long>(anticipate.count()), static_cast<long long>(lateUs[lateUs.size() / 2]),
          static_cast<long long>(lateUs[lateUs.size() * 99 / 100]));
    }
  }
}

TEST_F(ShareIpc, InPlaceWriteSlotCommitsAndAbandonedWritesStayInvisible) {
  Publisher pub(name_, SlotLayout::images(layout_, 3), shareOptions());
  Subscriber sub(name_, subscribeOptions());
  {
    WriteSlot ws = pub.acquireWrite();
    ws.frame().sequence = 42;
    fillPattern(ws.frame(), layout_);
    Frame meta;
    meta.sequence = 42;
    meta.wallClockMs = 1234;
    pub.commit(std::move(ws), meta);
  }
  {
    WriteSlot abandoned = pub.acquireWrite();
    abandoned.frame().data[0][0] = 0xEE;
  }
  auto f = sub.latest();
  ASSERT_TRUE(f);
  EXPECT_EQ(f->frame().sequence, 42u);
  EXPECT_EQ(f->frame().wallClockMs, 1234);
  EXPECT_TRUE(checkPattern(f->frame(), layout_).empty());
  EXPECT_EQ(pub.stats().publishes, 1u);
  EXPECT_FALSE(sub.next(1ms)) << "an abandoned write is not a frame";
}

TEST_F(ShareIpc, PublisherKilledThenRestartedReadersFailClearlyAndReattach) {
  auto pubChild = std::make_unique<Child>(peer({"publish", name_, dir_, "4"}));
  ASSERT_EQ(pubChild->readLine(), "ready");
  Subscriber sub(name_, subscribeOptions());
  const auto firstSession = sub.info().sessionId;
  auto kept = sub.next(10s);
  ASSERT_TRUE(kept);
  EXPECT_TRUE(checkPattern(kept->frame(), layout_).empty());

  pubChild->kill();
  try {
    while (sub.next(10s)) {
    }
    ADD_FAILURE() << "next() kept returning frames after the publisher died";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), Errc::kUnavailable);
    EXPECT_NE(std::string(e.what()).find("publisher '" + name_ + "' went away"), std::string::npos)
        << e.what();
  }
  EXPECT_FALSE(sub.connected());
  EXPECT_THROW(sub.latest(), Error);
  // The frame leased before the death stays mapped and readable (memory outlives the publisher).
  EXPECT_TRUE(checkPattern(kept->frame(), layout_).empty());
  try {
    sub.reconnect();
    ADD_FAILURE() << "reconnect() succeeded with no publisher";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), Errc::kUnavailable) << e.what();
  }

  pubChild = std::make_unique<Child>(peer({"publish", name_, dir_, "4"}));
  ASSERT_EQ(pubChild->readLine(), "ready") << "a restarted publisher must replace the stale socket";
  sub.reconnect();
  EXPECT_TRUE(sub.connected());
  EXPECT_NE(sub.info().sessionId, firstSession);
  EXPECT_EQ(sub.stats().reconnects, 1u);
  auto f = sub.next(10s);
  ASSERT_TRUE(f);
  EXPECT_TRUE(checkPattern(f->frame(), layout_).empty());
  EXPECT_TRUE(f->valid());
}

/// poll()s `fd` for POLLIN up to `limit`: true when it became readable.
bool pollReadable(int fd, std::chrono::milliseconds limit) {
  pollfd p{fd, POLLIN, 0};
  int rc;
  do {
    rc = ::poll(&p, 1, static_cast<int>(limit.count()));
  } while (rc < 0 && errno == EINTR);
  return rc == 1 && (p.revents & POLLIN) != 0;
}

TEST_F(ShareIpc, APolledReaderGetsEveryFrameOfA30FpsPublisherAndSeesItDie) {
  constexpr int kFrames = 30;
  Child pubChild(peer({"publish-paced", name_, dir_, "4", "30", std::to_string(kFrames)}));
  ASSERT_EQ(pubChild.readLine(), "ready");
  Subscriber sub(name_, subscribeOptions());
  const int fd = sub.pollFd();
  ASSERT_GE(fd, 0);
  EXPECT_EQ(sub.pollFd(), fd) << "the same descriptor on every call";
  std::uint64_t last = 0;
  while (last < kFrames) {
    // No thread blocks in next(): the descriptor says when to read. 5 s >> the 33 ms frame period.
    ASSERT_TRUE(pollReadable(fd, 5s)) << "no wake-up after frame " << last;
    while (auto f = sub.next(0ms)) {
      // From the newest frame when it subscribed (the first, unless the machine was slow) on, each one.
      if (last == 0) {
        EXPECT_LE(f->frame().sequence, 2u);
      } else {
        EXPECT_EQ(f->frame().sequence, last + 1) << "a frame skipped or repeated";
      }
      EXPECT_TRUE(checkPattern(f->frame(), layout_).empty());
      last = f->frame().sequence;
    }
  }
  EXPECT_EQ(sub.stats().missed, 0u);
  ASSERT_EQ(pubChild.readLine(), "done");

  pubChild.kill();
  // A dead publisher makes the descriptor readable, and the read says why: nobody hangs.
  ASSERT_TRUE(pollReadable(fd, 5s)) << "the descriptor did not turn readable when the publisher died";
  try {
    (void)sub.next(0ms);
    ADD_FAILURE() << "next() after the publisher died did not throw";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), Errc::kUnavailable) << e.what();
  }
  EXPECT_TRUE(pollReadable(fd, 0ms)) << "readable for as long as the publisher is gone";

  // A restarted publisher: reconnect() keeps the descriptor, which wakes for the new session's frames.
  Child restarted(peer({"publish", name_, dir_, "4"}));
  ASSERT_EQ(restarted.readLine(), "ready");
  sub.reconnect();
  EXPECT_EQ(sub.pollFd(), fd);
  std::optional<SharedFrame> f;
  for (int i = 0; i < 100 && !f; ++i) {
    ASSERT_TRUE(pollReadable(fd, 5s));
    f = sub.next(0ms);
  }
  ASSERT_TRUE(f) << "readable a hundred times without a frame";
  EXPECT_TRUE(checkPattern(f->frame(), layout_).empty());
}

TEST_F(ShareIpc, APublisherRefusesANotifyWithoutAnEventfd) {
  Publisher pub(name_, SlotLayout::images(layout_, 2), shareOptions());
  Subscriber sub(name_, subscribeOptions());  // a registered reader, so the publisher reads its messages
  ASSERT_TRUE(waitForReaders(pub, 1, 10s));
  // A raw client after the handshake sends a Notify with a pipe: a write to a pipe could block the publisher.
  auto sock = share_detail::connectSeqpacket(socketPath());
  share_detail::Hello hello;
  hello.pid = ::getpid();
  share_detail::sendMessage(sock.get(), share_detail::encodeHello(hello));
  auto welcome = share_detail::receiveMessage(sock.get(), 10s);
  ASSERT_TRUE(welcome);
  ASSERT_EQ(share_detail::decodeHeader(welcome->bytes).type, share_detail::MessageType::kWelcome);
  int pipeFds[2];
  ASSERT_EQ(::pipe2(pipeFds, O_CLOEXEC), 0);
  const int notifyFds[1] = {pipeFds[1]};
  share_detail::sendMessage(sock.get(), share_detail::encodeEmpty(share_detail::MessageType::kNotify), notifyFds);
  auto answer = share_detail::receiveMessage(sock.get(), 10s);
  ::close(pipeFds[0]);
  ::close(pipeFds[1]);
  ASSERT_TRUE(answer);
  EXPECT_EQ(share_detail::decodeHeader(answer->bytes).type, share_detail::MessageType::kReject);
  EXPECT_NE(share_detail::decodeReject(answer->bytes).reason.find("eventfd"), std::string::npos);
  // The publisher carries on: the polite reader still gets frames.
  publishSeq(pub, 1);
  auto f = sub.next(10s);
  ASSERT_TRUE(f);
  EXPECT_EQ(f->frame().sequence, 1u);
}

/// A publisher from before the Notify message (share protocol types 4 and 5, added after version 1
/// shipped), as a reader of today meets it: it relays one reader's session to a real Publisher (the
/// Hello up; the Welcome with its descriptors, and whatever else the publisher sends, down) and, as
/// publishers then did with anything a reader sent after its Hello, drains and ignores every later
/// message of the reader. Either side hanging up ends both. Thread-safety: ignored() from any thread.
class PublisherBeforeNotify {
 public:
  PublisherBeforeNotify(const std::string& socketPath, std::string publisherSocketPath)
      : listener_(share_detail::listenSeqpacket(socketPath, std::nullopt)),
        publisherSocketPath_(std::move(publisherSocketPath)),
        thread_([this] { run(); }) {}
  ~PublisherBeforeNotify() {
    stop_ = true;
    thread_.join();
  }
  PublisherBeforeNotify(const PublisherBeforeNotify&) = delete;
  PublisherBeforeNotify& operator=(const PublisherBeforeNotify&) = delete;

  /// Messages the reader sent after its Hello, drained and never answered.
  int ignored() const { return ignored_.load(); }

 private:
  void run() noexcept {
    try {
      pollfd listening{listener_.get(), POLLIN, 0};
      while (!stop_ && ::poll(&listening, 1, 50) <= 0) {
      }
      if (stop_) return;
      UniqueFd reader(::accept4(listener_.get(), nullptr, nullptr, SOCK_CLOEXEC));
      if (!reader) return;
      UniqueFd publisher = share_detail::connectSeqpacket(publisherSocketPath_);
      bool helloRelayed = false;
      while (!stop_) {
        pollfd p[2] = {{reader.get(), POLLIN, 0}, {publisher.get(), POLLIN, 0}};
        if (::poll(p, 2, 50) <= 0) continue;
        if (p[0].revents != 0) {
          auto m = share_detail::receiveMessageNow(reader.get());
          if (!m) return;  // the reader left: closing our side lets the publisher drop it
          if (!m->bytes.empty() || !m->fds.empty()) {
            if (helloRelayed) {
              ++ignored_;  // a Notify, which this publisher's protocol does not know: dropped with its eventfd
            } else {
              relay(publisher.get(), *m);
              helloRelayed = true;
            }
          }
        }
        if (p[1].revents != 0) {
          auto m = share_detail::receiveMessageNow(publisher.get());
          if (!m) return;  // the publisher went away: the reader sees its socket hang up
          if (!m->bytes.empty() || !m->fds.empty()) relay(reader.get(), *m);
        }
      }
    } catch (const Error&) {
      // A socket failed: ending the relay closes both sides, which is what a dead publisher does.
    }
  }

  static void relay(int to, const share_detail::ReceivedMessage& m) {
    std::vector<int> fds;
    for (const UniqueFd& fd : m.fds) fds.push_back(fd.get());
    share_detail::sendMessage(to, m.bytes, fds);
  }

  std::atomic<bool> stop_{false};
  std::atomic<int> ignored_{0};
  UniqueFd listener_;
  std::string publisherSocketPath_;
  std::thread thread_;  // last: it starts once the members above exist
};

// A reader of today against a publisher that predates the Notify message: reading needs nothing new and
// works; asking it for a poll descriptor fails within the handshake timeout, saying why, and the reader
// reads on and still sees the publisher go away.
TEST_F(ShareIpc, AReaderOfTodayReadsFromAPublisherThatNeverSendsNotifyOk) {
  auto pub = std::make_unique<Publisher>(name_, SlotLayout::images(layout_, 4), shareOptions());
  const std::string oldDir = dir_ + "/old";
  ASSERT_EQ(::mkdir(oldDir.c_str(), 0700), 0) << std::strerror(errno);
  PublisherBeforeNotify old(share_detail::socketPathFor(oldDir, name_), socketPath());
  SubscribeOptions options = subscribeOptions();
  options.directory = oldDir;
  options.handshakeTimeout = 1s;
  Subscriber sub(name_, options);
  ASSERT_TRUE(waitForReaders(*pub, 1, 10s));

  publishSeq(*pub, 1);
  {
    auto f = sub.next(10s);
    ASSERT_TRUE(f) << "no frame through a publisher of before Notify";
    EXPECT_EQ(f->frame().sequence, 1u);
    EXPECT_TRUE(checkPattern(f->frame(), layout_).empty());
  }
  EXPECT_EQ(old.ignored(), 0) << "a reader that does not poll sends nothing after its Hello";

  const auto asked = std::chrono::steady_clock::now();
  try {
    (void)sub.pollFd();
    ADD_FAILURE() << "pollFd() succeeded against a publisher that never answers a Notify";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), Errc::kTimeout) << e.what();
    EXPECT_NE(std::string(e.what()).find("older than this reader"), std::string::npos) << e.what();
  }
  EXPECT_LT(std::chrono::steady_clock::now() - asked, 10s) << "bounded by the handshake timeout (1 s)";
  const auto until = std::chrono::steady_clock::now() + 10s;
  while (old.ignored() < 1 && std::chrono::steady_clock::now() < until) std::this_thread::sleep_for(5ms);
  EXPECT_EQ(old.ignored(), 1) << "the Notify reached the old publisher, which ignored it";

  // The reader reads on, every frame, in order.
  for (std::uint64_t seq = 2; seq <= 4; ++seq) {
    publishSeq(*pub, seq);
    auto f = sub.next(10s);
    ASSERT_TRUE(f) << "no frame " << seq << " after the refused pollFd()";
    EXPECT_EQ(f->frame().sequence, seq);
    EXPECT_TRUE(checkPattern(f->frame(), layout_).empty());
  }
  EXPECT_EQ(sub.stats().missed, 0u);

  // And the publisher going away is still seen.
  pub.reset();
  try {
    (void)sub.next(10s);
    ADD_FAILURE() << "next() after the publisher closed did not throw";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), Errc::kUnavailable) << e.what();
  }
}

TEST_F(ShareIpc, SecondPublisherForALiveNameIsRefused) {
  Publisher pub(name_, SlotLayout::images(layout_, 2), shareOptions());
  try {
    Publisher again(name_, SlotLayout::images(layout_, 2), shareOptions());
    ADD_FAILURE() << "two publishers on one name";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), Errc::kUnavailable);
  }
  Subscriber sub(name_, subscribeOptions());  // the first one still serves
  EXPECT_TRUE(sub.connected());
}

TEST_F(ShareIpc, SubscribingToNobodyIsNotFound) {
  try {
    Subscriber sub("nobody-here", subscribeOptions());
    ADD_FAILURE() << "subscribed to a name nobody publishes";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), Errc::kNotFound);
    EXPECT_NE(std::string(e.what()).find("no publisher 'nobody-here'"), std::string::npos) << e.what();
  }
}

// A socket file nobody listens on (its publisher died without removing it): connect() says
// ECONNREFUSED, and the reader reports the publisher gone, not "cannot reach".
TEST_F(ShareIpc, AStaleSocketOfADeadPublisherIsUnavailable) {
  {
    UniqueFd stale(::socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0));
    ASSERT_TRUE(stale);
    sockaddr_un addr{};
    addr.sun_family = AF_UNIX;
    ASSERT_LT(socketPath().size(), sizeof(addr.sun_path));
    std::memcpy(addr.sun_path, socketPath().c_str(), socketPath().size() + 1);
    ASSERT_EQ(::bind(stale.get(), reinterpret_cast<const sockaddr*>(&addr), sizeof(addr)), 0) << std::strerror(errno);
  }  // closed without listen(): the file stays
  try {
    Subscriber sub(name_, subscribeOptions());
    ADD_FAILURE() << "subscribed through a socket nobody listens on";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), Errc::kUnavailable) << e.what();
    EXPECT_NE(std::string(e.what()).find("publisher '" + name_ + "' went away (stale socket " + socketPath() + ":"),
              std::string::npos)
        << e.what();
  }
  // Asked to wait, and nobody comes back: it waits the whole time, then says the same.
  SubscribeOptions waiting = subscribeOptions();
  waiting.waitForPublisher = 300ms;
  const auto t0 = std::chrono::steady_clock::now();
  try {
    Subscriber sub(name_, waiting);
    ADD_FAILURE() << "subscribed through a socket nobody listens on";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), Errc::kUnavailable) << e.what();
  }
  EXPECT_GE(std::chrono::steady_clock::now() - t0, 300ms) << "gave up before waitForPublisher";
}

// A reader opened while its publisher lies dead (SIGKILL left the socket file) waits for the
// restarted one, as it waits for a share not yet published.
TEST_F(ShareIpc, SubscribingWaitsThroughAKilledPublishersSocketUntilItRestarts) {
  {
    Child killed(peer({"publish", name_, dir_, "4"}));
    ASSERT_EQ(killed.readLine(), "ready");
    killed.kill();
  }
  ASSERT_TRUE(std::filesystem::exists(socketPath())) << "SIGKILL should leave the socket file behind";
  std::unique_ptr<Publisher> restarted;
  std::thread restart([&] {
    std::this_thread::sleep_for(300ms);  // the publisher's late restart is what is tested
    restarted = std::make_unique<Publisher>(name_, SlotLayout::images(layout_, 4), shareOptions());
  });
  SubscribeOptions waiting = subscribeOptions();
  waiting.waitForPublisher = 20s;
  std::optional<Subscriber> sub;
  try {
    sub.emplace(name_, waiting);
  } catch (const Error& e) {
    ADD_FAILURE() << "did not wait for the restarted publisher: " << e.what();
  }
  restart.join();
  ASSERT_TRUE(sub);
  EXPECT_EQ(sub->info().publisherPid, ::getpid());
  publishSeq(*restarted, 7);
  auto f = sub->next(10s);
  ASSERT_TRUE(f);
  EXPECT_EQ(f->frame().sequence, 7u);
  EXPECT_TRUE(checkPattern(f->frame(), layout_).empty());
}

// listShares: a live publisher, a dead one's socket file and files that are no shares, told apart
// without a connection (the publisher sees no client).
TEST_F(ShareIpc, ListSharesTellsLiveFromDeadWithoutConnecting) {
  Publisher live("b-live", SlotLayout::images(layout_, 2), shareOptions());
  {
    Child killed(peer({"publish", "a-dead", dir_, "2"}));
    ASSERT_EQ(killed.readLine(), "ready");
    killed.kill();
  }
  { std::ofstream(dir_ + "/c-file.sock") << "not a socket"; }
  { std::ofstream(dir_ + "/notes.txt") << "not a share"; }
  const auto shares = listShares(dir_);
  ASSERT_EQ(shares.size(), 2u);
  EXPECT_EQ(shares[0].name, "a-dead");
  EXPECT_FALSE(shares[0].live);
  EXPECT_EQ(shares[0].socketPath, dir_ + "/a-dead.sock");
  EXPECT_EQ(shares[1].name, "b-live");
  EXPECT_TRUE(shares[1].live);
  EXPECT_EQ(live.stats().rejectedClients, 0u);
  EXPECT_EQ(live.stats().readersConnected, 0u);
  EXPECT_TRUE(listShares(dir_ + "/none").empty()) << "a directory nobody published in: no shares";
}

TEST_F(ShareIpc, BadNamesAndMismatchedFramesAreInvalidArguments) {
  EXPECT_THROW(Publisher("../etc", SlotLayout::images(layout_, 2), shareOptions()), Error);
  EXPECT_THROW(Publisher("", SlotLayout::images(layout_, 2), shareOptions()), Error);
  EXPECT_THROW(Publisher(name_, SlotLayout::images(layout_, 0), shareOptions()), Error);
  Publisher pub(name_, SlotLayout::images(layout_, 2), shareOptions());
  std::vector<std::uint8_t> other(computeLayout(PixelFormat::kNV12, 64, 48).totalBytes);
  Frame wrong;
  bindLayout(wrong, computeLayout(PixelFormat::kNV12, 64, 48), other.data(), MemoryKind::kHost);
  try {
    pub.publish(wrong);
    ADD_FAILURE();
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), Errc::kInvalidArgument);
  }
  Frame device = frame_;
  device.memory = MemoryKind::kDevice;
  try {
    pub.publish(device);
    ADD_FAILURE();
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), Errc::kUnsupported);
  }
  EXPECT_EQ(pub.stats().publishes, 0u);
}

// issue 22: a same-uid reader writing far-future lease stamps pinned every slot (a slow reader went
// from 0 to 34 overruns in 40 frames). Forged stamps now count as expired, and are counted.
TEST_F(ShareIpc, LeaseStampsFromTheFutureDoNotPinSlots) {
  Publisher pub(name_, SlotLayout::images(layout_, 4), shareOptions());
  auto sock = share_detail::connectSeqpacket(socketPath());
  share_detail::sendMessage(sock.get(),
                            share_detail::encodeHello(share_detail::Hello{1, 1, share_detail::kAcceptHost, ::getpid()}));
  auto welcome = share_detail::receiveMessage(sock.get(), 10s);
  ASSERT_TRUE(welcome);
  ASSERT_EQ(welcome->fds.size(), 3u);
  auto* page = static_cast<share_detail::LeasePage*>(::mmap(nullptr, share_detail::kLeasePageBytes,
                                                           PROT_READ | PROT_WRITE, MAP_SHARED, welcome->fds[2].get(), 0));
  ASSERT_NE(page, MAP_FAILED);
  const std::int64_t future = monotonicNs() / 1'000'000 + 3'600'000;  // an hour ahead
  for (std::uint32_t slot = 0; slot < 4; ++slot) page->entry[slot].store(share_detail::packLease(slot, future));
  Subscriber slow(name_, subscribeOptions());
  publishSeq(pub, 1);
  auto held = slow.latest();  // a slow reader keeps one frame while 40 more are published
  ASSERT_TRUE(held);
  for (std::uint64_t seq = 2; seq <= 41; ++seq) publishSeq(pub, seq);
  EXPECT_TRUE(held->valid()) << "the honest lease was overwritten: forged ones pinned the other slots";
  EXPECT_EQ(pub.stats().overruns, 0u);
  EXPECT_GT(pub.stats().futureLeaseStamps, 0u);
  ::munmap(page, share_detail::kLeasePageBytes);
}

// issue 22: idle readers were never reaped, so one process could hold all 32 reader slots.
TEST_F(ShareIpc, AReaderThatTakesNothingIsDroppedAndOneThatReadsStays) {
  ShareOptions o = shareOptions();
  o.readerIdleTimeout = 300ms;
  Publisher pub(name_, SlotLayout::images(layout_, 4), o);
  Subscriber idle(name_, subscribeOptions());
  Subscriber reading(name_, subscribeOptions());
  ASSERT_TRUE(waitForReaders(pub, 2, 5s));
  const auto deadline = std::chrono::steady_clock::now() + 5s;
  std::uint64_t seq = 0;
  while (pub.stats().idleReadersDropped == 0 && std::chrono::steady_clock::now() < deadline) {
    publishSeq(pub, ++seq);
    EXPECT_TRUE(reading.latest().has_value());
    std::this_thread::sleep_for(10ms);
  }
  EXPECT_EQ(pub.stats().idleReadersDropped, 1u);
  EXPECT_TRUE(waitForReaders(pub, 1, 2s));
  EXPECT_TRUE(reading.connected());
  publishSeq(pub, ++seq);
  EXPECT_TRUE(reading.latest().has_value()) << "the reading subscriber lost its session";
  // Nothing published: nobody is idle, however long the wait.
  const auto quietEnd = std::chrono::steady_clock::now() + 600ms;
  while (std::chrono::steady_clock::now() < quietEnd) std::this_thread::sleep_for(50ms);
  EXPECT_EQ(pub.stats().readersConnected, 1u);
}

TEST_F(ShareIpc, SocketAndDirectoryArePrivate) {
  Publisher pub(name_, SlotLayout::images(layout_, 2), shareOptions());
  struct stat st {};
  ASSERT_EQ(::stat(socketPath().c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0600u);
  ASSERT_EQ(::stat(dir_.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 077, 0u);
}

TEST_F(ShareIpc, ReadersCannotMapTheRingWritable) {
  Publisher pub(name_, SlotLayout::images(layout_, 2), shareOptions());
  auto welcome = rawExchange(
      share_detail::encodeHello(share_detail::Hello{1, 1, share_detail::kAcceptHost, ::getpid()}));
  ASSERT_TRUE(welcome);
  ASSERT_EQ(welcome->fds.size(), 3u);
  for (int i = 0; i < 2; ++i) {  // control block and slots: sealed against writable mappings
    void* p = ::mmap(nullptr, 4096, PROT_READ | PROT_WRITE, MAP_SHARED, welcome->fds[i].get(), 0);
    EXPECT_EQ(p, MAP_FAILED) << "descriptor " << i << " could be mapped writable";
    if (p != MAP_FAILED) ::munmap(p, 4096);
    EXPECT_NE(::ftruncate(welcome->fds[i].get(), 0), 0) << "descriptor " << i << " could be shrunk";
  }
}

TEST_F(ShareIpc, VersionMismatchIsRefusedWithBothVersionsNamed) {
  Publisher pub(name_, SlotLayout::images(layout_, 2), shareOptions());
  const auto answer =
      rawExchange(share_detail::encodeHello(share_detail::Hello{2, 3, share_detail::kAcceptHost, 1}, 2));
  ASSERT_TRUE(answer);
  const auto reject = share_detail::decodeReject(answer->bytes);
  EXPECT_EQ(reject.code, Errc::kProtocol);
  EXPECT_NE(reject.reason.find("v2..v3"), std::string::npos) << reject.reason;
  EXPECT_NE(reject.reason.find("speaks v1"), std::string::npos) << reject.reason;
  EXPECT_EQ(pub.stats().rejectedClients, 1u);
  Subscriber sub(name_, subscribeOptions());
  EXPECT_TRUE(sub.connected());
}

TEST_F(ShareIpc, SubscriberRefusesAPublisherOfAnotherVersion) {
  // A fake publisher from the future answers every Hello with a version-7 Welcome.
  auto listener = share_detail::listenSeqpacket(socketPath(), std::nullopt);
  std::thread fake([&] {
    pollfd p{listener.get(), POLLIN, 0};
    if (::poll(&p, 1, 20000) != 1) return;
    zerohop::UniqueFd client(::accept4(listener.get(), nullptr, nullptr, SOCK_CLOEXEC));
    if (!client) return;
    try {
      share_detail::receiveMessage(client.get(), 20s);
      auto w = share_detail::encodeWelcome(share_detail::Welcome{});
      w[4] = 7;  // header version
      share_detail::sendMessage(client.get(), w);
      share_detail::receiveMessage(client.get(), 20s);  // wait for the subscriber to hang up
    } catch (const Error&) {
    }
  });
  try {
    Subscriber sub(name_, subscribeOptions());
    ADD_FAILURE() << "subscribed to a v7 publisher";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), Errc::kProtocol);
    EXPECT_NE(std::string(e.what()).find("speaks share protocol v7, this subscriber speaks v1"),
              std::string::npos)
        << e.what();
  }
  fake.join();
}

TEST_F(ShareIpc, MalformedHandshakesAreRefusedAndThePublisherCarriesOn) {
  ShareOptions o = shareOptions();
  o.handshakeTimeout = 300ms;
  Publisher pub(name_, SlotLayout::images(layout_, 2), o);
  publishSeq(pub, 1);
  auto expectReject = [&](const std::vector<std::uint8_t>& bytes, const std::string& fragment, int fd = -1) {
    const auto answer = rawExchange(bytes, fd);
    ASSERT_TRUE(answer) << "expected a Reject for: " << fragment;
    const auto reject = share_detail::decodeReject(answer->bytes);
    EXPECT_NE(reject.reason.find(fragment), std::string::npos) << reject.reason;
  };
  expectReject({1, 2, 3}, "shorter than the 16-byte header");
  auto badMagic = share_detail::encodeHello(share_detail::Hello{});
  badMagic[0] = 'X';
  expectReject(badMagic, "bad magic");
  auto lying = share_detail::encodeHello(share_detail::Hello{});
  lying[8] = lying[9] = lying[10] = 0xFF;  // announces ~16 MiB of payload
  expectReject(lying, "payload bytes");
  std::vector<std::uint8_t> oversized(share_detail::kMaxMessageBytes + 100, 0xAB);
  expectReject(oversized, "larger than");
  auto wrongType = share_detail::encodeWelcome(share_detail::Welcome{});
  expectReject(wrongType, "expected Hello");
  const int devnull = ::open("/dev/null", O_RDONLY | O_CLOEXEC);
  expectReject(share_detail::encodeHello(share_detail::Hello{}), "must not carry file descriptors", devnull);
  ::close(devnull);
  expectReject({}, "no Hello within 300 ms");  // connects and says nothing
  {
    auto sock = share_detail::connectSeqpacket(socketPath());  // connects and leaves at once
  }
  EXPECT_GE(pub.stats().rejectedClients, 7u);
  Subscriber sub(name_, subscribeOptions());
  auto f = sub.latest();
  ASSERT_TRUE(f);
  EXPECT_TRUE(checkPattern(f->frame(), layout_).empty());
}

TEST_F(ShareIpc, AnotherUidIsRefused) {
  if (::geteuid() != 0) GTEST_SKIP() << "needs root to run a client as uid 65534 (nobody)";
  Publisher pub(name_, SlotLayout::images(layout_, 2), shareOptions());
  {
    // Default permissions: the 0700 directory already keeps uid 65534 out.
    Child other(peer({"--as-uid", "65534", "connect", name_, dir_}));
    const auto line = other.readLine();
    ASSERT_TRUE(line);
    EXPECT_NE(line->find("Permission denied"), std::string::npos) << *line;
    EXPECT_EQ(other.wait(), 2);
  }
  // Even with the file permissions opened up, SO_PEERCRED refuses the foreign uid (the client is
  // told to trust a uid-0 publisher, so it is the publisher's check that speaks here).
  ASSERT_EQ(::chmod(dir_.c_str(), 0755), 0);
  ASSERT_EQ(::chmod(socketPath().c_str(), 0666), 0);
  Child other(peer({"--as-uid", "65534", "connect", name_, dir_, "0"}));
  const auto line = other.readLine();
  ASSERT_TRUE(line);
  EXPECT_NE(line->find("uid 65534"), std::string::npos) << *line;
  EXPECT_NE(line->find("may not subscribe"), std::string::npos) << *line;
  EXPECT_EQ(other.wait(), 2);
  EXPECT_EQ(pub.stats().rejectedClients, 1u);
  EXPECT_EQ(pub.stats().readersConnected, 0u);
}

TEST_F(ShareIpc, AnAllowedGroupMaySubscribe) {
  if (::geteuid() != 0) GTEST_SKIP() << "needs root to run a client as uid 65534 (nobody)";
  ASSERT_EQ(::chmod(dir_.c_str(), 0711), 0);
  ShareOptions o;
  o.directory = dir_ + "/grp";  // created 0710 root:65534
  o.allowGroup = 65534;
  Publisher pub(name_, SlotLayout::images(layout_, 2), o);
  struct stat st {};
  ASSERT_EQ(::stat(o.directory.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0710u);
  EXPECT_EQ(st.st_gid, 65534u);
  ASSERT_EQ(::stat((o.directory + "/" + name_ + ".sock").c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0660u);
  publishSeq(pub, 1);
  Child member(peer({"--as-uid", "65534", "connect", name_, o.directory, "0"}));
  const auto line = member.readLine();
  ASSERT_TRUE(line);
  EXPECT_EQ(*line, "connected");
  EXPECT_EQ(member.wait(), 0);
  EXPECT_EQ(pub.stats().rejectedClients, 0u);
}

TEST_F(ShareIpc, SubscriberRefusesAPublisherOfAnotherUid) {
  if (::geteuid() != 0) GTEST_SKIP() << "needs root to run a publisher as uid 65534 (nobody)";
  ASSERT_EQ(::chmod(dir_.c_str(), 0755), 0);
  const std::string theirs = dir_ + "/nobody";
  ASSERT_EQ(::mkdir(theirs.c_str(), 0755), 0);
  ASSERT_EQ(::chown(theirs.c_str(), 65534, 65534), 0);
  Child pubChild(peer({"--as-uid", "65534", "publish", name_, theirs, "2"}));
  ASSERT_EQ(pubChild.readLine(), "ready");
  ASSERT_EQ(::chmod((theirs + "/" + name_ + ".sock").c_str(), 0666), 0);  // let us reach it at all
  SubscribeOptions o;
  o.directory = theirs;
  try {
    Subscriber sub(name_, o);
    ADD_FAILURE() << "subscribed to a publisher of another uid";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), Errc::kUnavailable);
    EXPECT_NE(std::string(e.what()).find("served by uid 65534"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace zerohop
