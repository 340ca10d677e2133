// The share ring across real processes: share_peer children publish or read while this process
// plays the other side: frames, reading and publishing (names, handshakes and access:
// share_ipc_access_test.cpp). Every test uses its own directory and name.
#include <gtest/gtest.h>

#include "share_ipc_fixture.hpp"

namespace zerohop {
namespace {

using namespace std::chrono_literals;
using share_test::checkPattern;
using share_test::Child;
using share_test::fillPattern;
using share_test::kPeer;
using share_test::ShareIpc;
using share_test::testLayout;

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

}  // namespace
}  // namespace zerohop
