// The share ring in DEVICE memory across real processes (label gpu): legacy CUDA IPC memory and
// event handles. Publishers write a pattern with a kernel; readers check it WITH A KERNEL on their
// own stream after cudaStreamWaitEvent(readyEvent). Without a CUDA device every test skips, saying why.
#include <gtest/gtest.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <memory>
#include <mutex>
#include <string_view>
#include <thread>
#include <vector>

#include "beside_program.hpp"
#include "gpu/cuda_check.hpp"
#include "gpu/cuda_handles.hpp"
#include "gpu_pattern.hpp"
#include "share/cuda/cuda_vmm.hpp"
#include "share_test_support.hpp"
#include "zerohop/error.hpp"
#include "zerohop/gpu.hpp"
#include "zerohop/log.hpp"
#include "zerohop/share.hpp"

namespace zerohop {
namespace {

using namespace std::chrono_literals;
using share_test::Child;
using share_test::launchFillPattern;
using share_test::PatternChecker;
using share_test::testLayout;

const std::string kGpuPeer = zerohop::testing::besideProgram(ZEROHOP_SHARE_GPU_PEER);
const std::string kHostPeer =
    zerohop::testing::besideProgram(ZEROHOP_SHARE_PEER);  // linked without zerohop::share_cuda

class ShareGpu : public ::testing::Test {
 protected:
  void SetUp() override {
    const GpuInfo info = probeGpu();
    if (!info.available) GTEST_SKIP() << "no CUDA device: " << info.reason;
    device_ = info.device;
    char tmpl[] = "/tmp/zerohop-share-gpu-test-XXXXXX";
    ASSERT_NE(::mkdtemp(tmpl), nullptr);
    dir_ = tmpl;
    name_ = ::testing::UnitTest::GetInstance()->current_test_info()->name();
  }
  void TearDown() override {
    stopPublishing();
    if (!dir_.empty()) std::filesystem::remove_all(dir_);
  }

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
  std::vector<std::string> gpuPeer(std::initializer_list<std::string> args) const {
    std::vector<std::string> v{kGpuPeer};
    v.insert(v.end(), args);
    return v;
  }

  /// Stops the publishing thread when it goes out of scope; declared after the Publisher it feeds,
  /// it ends the thread before that Publisher is destroyed.
  struct PublishingStop {
    ShareGpu* fixture;
    ~PublishingStop() { fixture->stopPublishing(); }
  };

  /// Publishes pattern frames written in place by a kernel, 1 ms apart, on a thread of this process.
  [[nodiscard]] PublishingStop startPublishingInPlace(Publisher& pub) {
    publisher_ = std::thread([this, &pub] {
      try {
        CudaStream stream(device_);
        for (std::uint64_t seq = 1; !stop_.load(); ++seq) {
          WriteSlot ws = pub.acquireWrite();
          launchFillPattern(ws.frame(), layout_, seq, stream.get());
          Frame meta;
          meta.sequence = seq;
          pub.commit(std::move(ws), meta, stream.get());
          published_.store(seq);
          std::this_thread::sleep_for(1ms);
        }
      } catch (const std::exception& e) {
        publishError_ = e.what();
      }
    });
    return PublishingStop{this};
  }
  void stopPublishing() {
    stop_.store(true);
    if (publisher_.joinable()) publisher_.join();
  }

  /// Publishes in place with `options`; a reader process verifies 120 frames with a kernel and
  /// reports the transport its Welcome named, which must be `transport`.
  void expectReaderProcessGets(const ShareOptions& options, const std::string& transport) {
    Publisher pub(name_, SlotLayout::deviceImages(layout_, 6, device_), options);
    const auto publishing = startPublishingInPlace(pub);
    Child reader(gpuPeer({"read", name_, dir_, "120"}));
    const auto line = reader.readLine(60s);
    ASSERT_TRUE(line.has_value());
    EXPECT_EQ(line->rfind("ok verified=120", 0), 0u) << *line;
    EXPECT_NE(line->find("transport=" + transport), std::string::npos) << *line;
    EXPECT_EQ(reader.wait(), 0);
    stopPublishing();
    EXPECT_TRUE(publishError_.empty()) << publishError_;
  }

  const ImageLayout layout_ = testLayout();
  int device_ = 0;
  std::string dir_, name_;
  std::thread publisher_;
  std::atomic<bool> stop_{false};
  std::atomic<std::uint64_t> published_{0};
  std::string publishError_;
};

TEST_F(ShareGpu, ThreeReaderProcessesVerifyInPlaceFramesWithAKernel) {
  Publisher pub(name_, SlotLayout::deviceImages(layout_, 6, device_), shareOptions());
  const auto publishing = startPublishingInPlace(pub);
  std::vector<std::unique_ptr<Child>> readers;
  for (int i = 0; i < 3; ++i)
    readers.push_back(std::make_unique<Child>(gpuPeer({"read", name_, dir_, "150"})));
  for (auto& r : readers) {
    const auto line = r->readLine(60s);
    ASSERT_TRUE(line.has_value()) << "reader said nothing";
    EXPECT_EQ(line->rfind("ok verified=150", 0), 0u) << *line;
    EXPECT_EQ(r->wait(), 0);
  }
  stopPublishing();
  EXPECT_TRUE(publishError_.empty()) << publishError_;
  EXPECT_GE(pub.stats().publishes, 150u);
}

// In-process readers: threads of the publisher's process get the publisher's own device pointers
// and slot events (no IPC handles), order their kernel after the slot's event and verify the bytes.
TEST_F(ShareGpu, InProcessReaderThreadsVerifyFramesWithAKernelWithoutIpc) {
  Publisher pub(name_, SlotLayout::deviceImages(layout_, 8, device_), shareOptions());
  std::uint8_t* slotBase = nullptr;
  {
    WriteSlot probe = pub.acquireWrite();  // abandoned: only to learn where the slots are
    slotBase = probe.frame().data[0];
  }
  const std::size_t stride = (layout_.totalBytes + 4095) / 4096 * 4096;
  const std::size_t ringBytes = stride * 8;
  const auto publishing = startPublishingInPlace(pub);
  constexpr int kReaders = 4, kFrames = 150;
  std::vector<int> verified(kReaders, 0);
  const auto errors = share_test::runThreads(kReaders, [&](int t) {
    Subscriber sub(name_, subscribeOptions());
    if (!sub.info().inProcess) throw Error(Errc::kInternal, "not an in-process subscription");
    CudaStream stream(device_);
    PatternChecker checker(device_);
    for (int tries = 0; verified[t] < kFrames && tries < 20 * kFrames; ++tries) {
      auto f = sub.next(2s);
      if (!f) continue;
      const Frame& fr = f->frame();
      // The publisher's own pointer: a whole number of slots away from the probed one.
      const std::ptrdiff_t diff = fr.data[0] - slotBase;
      if (diff % static_cast<std::ptrdiff_t>(stride) != 0 ||
          std::abs(diff) >= static_cast<std::ptrdiff_t>(ringBytes))
        throw Error(Errc::kInternal, "frame does not point into the publisher's own slots");
      if (fr.memory != MemoryKind::kDevice || !fr.gpu.readyEvent)
        throw Error(Errc::kInternal, "not a device frame with a ready event");
      cuda::check(cudaStreamWaitEvent(stream.get(), static_cast<cudaEvent_t>(fr.gpu.readyEvent), 0),
                  "cudaStreamWaitEvent(readyEvent)");
      const std::uint32_t bad = checker.check(fr, layout_, fr.sequence, stream.get());
      if (!f->valid()) continue;  // overwritten meanwhile: reported, not counted
      if (bad != 0)
        throw Error(Errc::kInternal,
                    std::to_string(bad) + " bytes wrong in seq " + std::to_string(fr.sequence));
      ++verified[t];
    }
  });
  stopPublishing();
  EXPECT_TRUE(publishError_.empty()) << publishError_;
  for (int t = 0; t < kReaders; ++t) {
    EXPECT_TRUE(errors[t].empty()) << "reader " << t << ": " << errors[t];
    EXPECT_EQ(verified[t], kFrames) << "reader " << t;
  }
}

// Memory export: CUDA VMM POSIX fds (SCM_RIGHTS) where the device supports them, legacy CUDA IPC as
// the fallback. Each carries kernel-verified frames to another process, and the reader says which
// transport its Welcome named.
TEST_F(ShareGpu, AutoExportPrefersVmmFdsWhereSupported) {
  const std::string noVmm = share_detail::vmmUnsupportedReason(device_);
  SCOPED_TRACE("VMM fd export: " + (noVmm.empty() ? std::string("supported") : noVmm));
  expectReaderProcessGets(shareOptions(), noVmm.empty() ? "cuda-vmm-fd" : "cuda-ipc-legacy");
}

TEST_F(ShareGpu, ForcedVmmFdExportCarriesVerifiedFramesToAReaderProcess) {
  const std::string noVmm = share_detail::vmmUnsupportedReason(device_);
  ShareOptions o = shareOptions();
  o.deviceExport = ShareOptions::DeviceExport::kVmmFd;
  if (!noVmm.empty()) {
    try {
      Publisher pub(name_, SlotLayout::deviceImages(layout_, 6, device_), o);
      FAIL() << "forced VMM export on a device without it must throw";
    } catch (const Error& e) {
      EXPECT_EQ(e.code(), Errc::kUnsupported) << e.what();
    }
    GTEST_SKIP() << "CUDA VMM fd export unsupported here: " << noVmm;
  }
  expectReaderProcessGets(o, "cuda-vmm-fd");
}

TEST_F(ShareGpu, LegacyIpcFallbackCarriesVerifiedFramesToAReaderProcess) {
  ShareOptions o = shareOptions();
  o.deviceExport = ShareOptions::DeviceExport::kLegacyIpc;
  expectReaderProcessGets(o, "cuda-ipc-legacy");
}

TEST_F(ShareGpu, CopyingPublishOfDeviceFramesWithStreamAndWithReadyEvent) {
  Publisher pub(name_, SlotLayout::deviceImages(layout_, 4, device_), shareOptions());
  Child reader(gpuPeer({"read", name_, dir_, "120"}));
  // Frames published before the reader subscribed are not counted: wait until it has.
  const auto deadline = std::chrono::steady_clock::now() + 20s;
  while (pub.stats().readersConnected == 0 && std::chrono::steady_clock::now() < deadline)
    std::this_thread::sleep_for(5ms);
  ASSERT_EQ(pub.stats().readersConnected, 1u) << "the reader did not subscribe";
  CudaStream stream(device_);
  CudaEvent ready(device_, false);
  DeviceBuffer staging(device_, layout_.totalBytes);
  Frame src;
  bindLayout(src, layout_, staging.data(), MemoryKind::kDevice);
  src.format = layout_.format;
  src.width = layout_.width;
  src.height = layout_.height;
  std::optional<std::string> line;
  std::atomic<bool> answered{false};
  std::thread collector([&] {
    line = reader.readLine(60s);
    answered.store(true);
  });
  for (std::uint64_t seq = 1; seq <= 3000 && !answered.load(); ++seq) {
    src.sequence = seq;
    launchFillPattern(src, layout_, seq, stream.get());
    if (seq % 2 == 0) {
      pub.publish(src, stream.get());  // copy on our stream: the next fill is ordered after it
      src.gpu = {};
    } else {
      ready.record(stream.get());
      src.gpu.readyEvent = ready.get();
      src.gpu.device = device_;
      pub.publish(src);  // copy on the publisher's stream after `ready`; returns when it is done
    }
    std::this_thread::sleep_for(1ms);
  }
  collector.join();
  ASSERT_TRUE(line.has_value());
  EXPECT_EQ(line->rfind("ok verified=120", 0), 0u) << *line;
  EXPECT_EQ(reader.wait(), 0);
}

TEST_F(ShareGpu, CommitWithoutOrderingIsRefusedAndAbandonsTheSlot) {
  Publisher pub(name_, SlotLayout::deviceImages(layout_, 3, device_), shareOptions());
  WriteSlot ws = pub.acquireWrite();
  EXPECT_EQ(ws.frame().memory, MemoryKind::kDevice);
  EXPECT_EQ(ws.frame().gpu.device, device_);
  try {
    pub.commit(std::move(ws), Frame{});
    FAIL() << "a device commit without stream or readyEvent must throw";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), Errc::kInvalidArgument);
    EXPECT_NE(std::string(e.what()).find("readyEvent"), std::string::npos) << e.what();
  }
  EXPECT_EQ(pub.stats().publishes, 0u);
}

TEST_F(ShareGpu, ReaderKilledWhileHoldingALeaseCostsThePublisherNothing) {
  Publisher pub(name_, SlotLayout::deviceImages(layout_, 4, device_), shareOptions());
  const auto publishing = startPublishingInPlace(pub);
  Child holder(gpuPeer({"hold", name_, dir_}));
  const auto line = holder.readLine(30s);
  ASSERT_TRUE(line.has_value());
  ASSERT_EQ(line->rfind("leased ", 0), 0u) << *line;
  EXPECT_EQ(pub.stats().readersConnected, 1u);
  holder.kill();
  const auto deadline = std::chrono::steady_clock::now() + 1s;
  while (pub.stats().readersConnected != 0 && std::chrono::steady_clock::now() < deadline)
    std::this_thread::sleep_for(5ms);
  EXPECT_EQ(pub.stats().readersConnected, 0u);
  EXPECT_EQ(pub.stats().leasedSlots, 0u);
  // Publishing went on, and a new reader verifies fresh frames.
  Child reader(gpuPeer({"read", name_, dir_, "100"}));
  const auto ok = reader.readLine(60s);
  ASSERT_TRUE(ok.has_value());
  EXPECT_EQ(ok->rfind("ok verified=100", 0), 0u) << *ok;
  EXPECT_EQ(reader.wait(), 0);
  stopPublishing();
  EXPECT_TRUE(publishError_.empty()) << publishError_;
}

TEST_F(ShareGpu, PublisherDeathGivesTheReaderAClearError) {
  Child publisher(gpuPeer({"publish", name_, dir_, "4"}));
  const auto ready = publisher.readLine(30s);
  ASSERT_TRUE(ready.has_value());
  ASSERT_EQ(*ready, "ready");
  Subscriber sub(name_, subscribeOptions());
  EXPECT_EQ(sub.info().memory, MemoryKind::kDevice);
  CudaStream stream(device_);
  PatternChecker checker(device_);
  std::uint64_t last = 0;
  for (int n = 0; n < 30;) {
    auto f = sub.next(5s);
    ASSERT_TRUE(f.has_value());
    const Frame& fr = f->frame();
    ASSERT_EQ(fr.memory, MemoryKind::kDevice);
    ASSERT_NE(fr.gpu.readyEvent, nullptr);
    cuda::check(cudaStreamWaitEvent(stream.get(), static_cast<cudaEvent_t>(fr.gpu.readyEvent), 0),
                "cudaStreamWaitEvent");
    const auto bad = checker.check(fr, layout_, fr.sequence, stream.get());
    if (!f->valid()) continue;
    EXPECT_EQ(bad, 0u) << "seq " << fr.sequence;
    EXPECT_GT(fr.sequence, last);
    last = fr.sequence;
    ++n;
  }
  publisher.kill();
  const auto t0 = std::chrono::steady_clock::now();
  try {
    for (;;) {
      (void)sub.next(200ms);
      ASSERT_LT(std::chrono::steady_clock::now() - t0, 3s)
          << "the reader did not notice the publisher's death";
    }
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), Errc::kUnavailable);
    EXPECT_NE(std::string(e.what()).find("went away"), std::string::npos) << e.what();
  }
  EXPECT_FALSE(sub.connected());
}

TEST_F(ShareGpu, ReaderBuiltWithoutCudaIsRefusedWithAClearMessage) {
  Publisher pub(name_, SlotLayout::deviceImages(layout_, 3, device_), shareOptions());
  Child hostReader({kHostPeer, "connect", name_, dir_});
  const auto line = hostReader.readLine(20s);
  ASSERT_TRUE(line.has_value());
  EXPECT_NE(line->find("error unsupported"), std::string::npos) << *line;
  EXPECT_NE(line->find("this reader was built without CUDA; publisher '" + name_ + "' shares device memory"),
            std::string::npos)
      << *line;
  EXPECT_EQ(hostReader.wait(), 2);
  EXPECT_EQ(pub.stats().readersConnected, 0u);
}

// The reader holds a frame (so the ring stays mapped) for kLinger after it saw the close. The
// publisher must wait that long, not free under it, and must return once the reader hung up, not
// at deviceDrainTimeout (which would log "freeing them anyway").
TEST_F(ShareGpu, ClosingPublisherWaitsForReadersToUnmapThenFrees) {
  constexpr auto kLinger = 800ms;
  ShareOptions o = shareOptions();
  o.deviceDrainTimeout = 15s;
  std::mutex logMutex;
  std::vector<std::string> warnings;
  log::setSink([&](log::Level level, std::string_view message) {
    if (level < log::Level::kWarn) return;
    std::lock_guard lock(logMutex);
    warnings.emplace_back(message);
  });
  struct SinkReset {
    ~SinkReset() { log::setSink({}); }
  } sinkReset;
  auto pub = std::make_unique<Publisher>(name_, SlotLayout::deviceImages(layout_, 4, device_), o);
  const auto publishing = startPublishingInPlace(*pub);
  Child reader(gpuPeer({"read", name_, dir_, "1000000", std::to_string(kLinger.count())}));
  const auto verifying = reader.readLine(20s);
  ASSERT_TRUE(verifying.has_value()) << "the reader said nothing";
  ASSERT_EQ(*verifying, "verifying");
  ASSERT_EQ(pub->stats().readersConnected, 1u);
  stopPublishing();
  const auto t0 = std::chrono::steady_clock::now();
  pub.reset();  // marks closed, waits until the reader unmapped and hung up, then frees
  const auto took = std::chrono::steady_clock::now() - t0;
  EXPECT_GE(took, kLinger - 100ms) << "the publisher freed its slots while the reader still mapped them";
  EXPECT_LT(took, 10s) << "the publisher did not notice the reader hang up; it waited for the timeout";
  {
    std::lock_guard lock(logMutex);
    for (const auto& w : warnings)
      EXPECT_EQ(w.find("still map the device slots"), std::string::npos) << w;
  }
  const auto line = reader.readLine(10s);
  ASSERT_TRUE(line.has_value());
  EXPECT_NE(line->find("error unavailable"), std::string::npos) << *line;
  EXPECT_NE(line->find("went away"), std::string::npos) << *line;
  EXPECT_EQ(reader.wait(), 2);
}

TEST_F(ShareGpu, MpsStateIsDetectedAndExplained) {
  const MpsStatus mps = detectMps();
  EXPECT_FALSE(mps.detail.empty());
  const std::string note = mpsHandoffNote(mps);
  if (!mps.active) {
    EXPECT_NE(note.find("nvidia-cuda-mps-control -d"), std::string::npos) << note;
  }
  std::printf("MPS: %s\n", mps.detail.c_str());
}

}  // namespace
}  // namespace zerohop
