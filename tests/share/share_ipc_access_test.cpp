// The share ring across real processes, its names, handshakes and access: a second publisher of a live
// name, stale sockets, listing, bad names, lease stamps, idle readers, private files, protocol versions,
// malformed handshakes, other users and groups. Every test uses its own directory and name.
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
    ASSERT_EQ(::bind(stale.get(), reinterpret_cast<const sockaddr*>(&addr), sizeof(addr)), 0)
        << std::strerror(errno);
  }  // closed without listen(): the file stays
  try {
    Subscriber sub(name_, subscribeOptions());
    ADD_FAILURE() << "subscribed through a socket nobody listens on";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), Errc::kUnavailable) << e.what();
    EXPECT_NE(
        std::string(e.what()).find("publisher '" + name_ + "' went away (stale socket " + socketPath() + ":"),
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
  share_detail::sendMessage(sock.get(), share_detail::encodeHello(share_detail::Hello{
                                            1, 1, share_detail::kAcceptHost, ::getpid()}));
  auto welcome = share_detail::receiveMessage(sock.get(), 10s);
  ASSERT_TRUE(welcome);
  ASSERT_EQ(welcome->fds.size(), 3u);
  auto* page = static_cast<share_detail::LeasePage*>(::mmap(
      nullptr, share_detail::kLeasePageBytes, PROT_READ | PROT_WRITE, MAP_SHARED, welcome->fds[2].get(), 0));
  ASSERT_NE(page, MAP_FAILED);
  const std::int64_t future = monotonicNs() / 1'000'000 + 3'600'000;  // an hour ahead
  for (std::uint32_t slot = 0; slot < 4; ++slot)
    page->entry[slot].store(share_detail::packLease(slot, future));
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
