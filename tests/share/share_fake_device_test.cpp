// Device-mode protocol across real processes WITHOUT a GPU: the same code paths as CUDA IPC (the
// 2-descriptor Welcome, DeviceSlots/DeviceEvents, device sessions, the drain before freeing, the
// refusals), with the host-memory fake transport of fake_device_transport.hpp at the edge.
#include <gtest/gtest.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <filesystem>
#include <thread>

#include "fake_device_transport.hpp"
#include "share_test_support.hpp"
#include "zerohop/error.hpp"
#include "zerohop/share.hpp"

namespace zerohop {
namespace {

using namespace std::chrono_literals;
using share_test::Child;
using share_test::fillPattern;
using share_test::testLayout;

const std::string kPeer = ZEROHOP_SHARE_PEER;

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
  // A reader starved of CPU on a loaded CI box may see overwritten frames (reported invalid, never
  // torn-and-valid): allow any number of those; 150 valid frames must still verify.
  Child reader(peer({"read", name_, dir_, "150", "1000000"}));
  const auto line = reader.readLine(60s);
  ASSERT_TRUE(line);
  EXPECT_EQ(line->rfind("ok verified=150", 0), 0u) << *line;
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

TEST_F(ShareFakeDevice, SubscribingInThePublishersOwnProcessIsRefusedClearly) {
  Publisher pub(name_, SlotLayout::deviceImages(layout_, 3), options());
  SubscribeOptions so;
  so.directory = dir_;
  try {
    Subscriber sub(name_, so);
    FAIL() << "CUDA IPC cannot open handles in the exporting process";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), Errc::kUnsupported);
    EXPECT_NE(std::string(e.what()).find("runs in this process"), std::string::npos) << e.what();
  }
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

}  // namespace
}  // namespace zerohop
