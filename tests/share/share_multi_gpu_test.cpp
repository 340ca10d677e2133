// A device ring read by a GPU other than the publisher's, or copied on request (label gpu).
// One GPU (runs everywhere there is one): the copy fallback forced by SubscribeOptions::deviceAccess,
// in this process and in another, every frame content-checked by a kernel on the reader's side;
// placement on the real devices. Two GPUs (skip with a reason on fewer): a ring on each GPU, a reader
// on the other GPU of each (peer where the GPUs can, else the copy) reads every frame, checked by its
// kernel, and the publisher keeps its frame rate. Without a CUDA device every test skips, saying why.
#include <gtest/gtest.h>
#include <stdlib.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdlib>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "beside_program.hpp"
#include "gpu/cuda_check.hpp"
#include "gpu/cuda_handles.hpp"
#include "gpu_pattern.hpp"
#include "gpupath/gpu_placement.hpp"
#include "share_test_support.hpp"
#include "zerohop/clock.hpp"
#include "zerohop/error.hpp"
#include "zerohop/gpu.hpp"
#include "zerohop/share.hpp"

namespace zerohop {
namespace {

using namespace std::chrono_literals;
using share_test::Child;
using share_test::launchFillPattern;
using share_test::PatternChecker;
using share_test::testLayout;

const std::string kGpuPeer = zerohop::testing::besideProgram(ZEROHOP_SHARE_GPU_PEER);
constexpr int kFrames = 120;           // 2 s at 60 fps
constexpr auto kPeriod = 16666us;      // 60 fps

/// Publishes kernel-written pattern frames at 60 fps on its own thread, on the ring's device.
class PacedPublisher {
 public:
  PacedPublisher(Publisher& pub, int device, const ImageLayout& layout) {
    thread_ = std::thread([this, &pub, device, layout] {
      try {
        cuda::check(cudaSetDevice(device), "cudaSetDevice(publisher)");
        CudaStream stream(device);
        const std::int64_t start = monotonicNs();
        for (std::uint64_t seq = 1; !stop_.load(); ++seq) {
          WriteSlot ws = pub.acquireWrite();
          launchFillPattern(ws.frame(), layout, seq, stream.get());
          Frame meta;
          meta.sequence = seq;
          pub.commit(std::move(ws), meta, stream.get());
          published_.store(seq);
          const std::int64_t due = start + static_cast<std::int64_t>(seq) * std::chrono::nanoseconds(kPeriod).count();
          std::this_thread::sleep_for(std::chrono::nanoseconds(std::max<std::int64_t>(0, due - monotonicNs())));
        }
        elapsedNs_ = monotonicNs() - start;
      } catch (const std::exception& e) {
        error_ = e.what();
      }
    });
  }
  ~PacedPublisher() { stop(); }
  void stop() {
    stop_.store(true);
    if (thread_.joinable()) thread_.join();
  }
  double fps() const { return elapsedNs_ > 0 ? published_.load() * 1e9 / static_cast<double>(elapsedNs_) : 0; }
  const std::string& error() const { return error_; }

 private:
  std::thread thread_;
  std::atomic<bool> stop_{false};
  std::atomic<std::uint64_t> published_{0};
  std::int64_t elapsedNs_ = 0;
  std::string error_;
};

class MultiGpu : public ::testing::Test {
 protected:
  void SetUp() override {
    const GpuInfo info = probeGpu();
    if (!info.available) GTEST_SKIP() << "no CUDA device: " << info.reason;
    devices_ = info.deviceCount;
    directory_.emplace();
    dir_ = directory_->path();
    name_ = ::testing::UnitTest::GetInstance()->current_test_info()->name();
  }
  ShareOptions shareOptions() const {
    ShareOptions o;
    o.directory = dir_;
    return o;
  }

  /// Reads kFrames consecutive frames on `readerDevice` in this process and checks each with a
  /// kernel there. Returns the error ("" = every frame verified) and fills `info`.
  std::string readEveryFrame(const std::string& name, int readerDevice, bool forceCopy, ShareInfo& info,
                             std::uint8_t* ringBase, std::size_t ringBytes) {
    SubscribeOptions o;
    o.directory = dir_;
    o.device = readerDevice;
    if (forceCopy) o.deviceAccess = SubscribeOptions::DeviceAccess::kCopy;
    Subscriber sub(name, o);
    info = sub.info();
    cuda::check(cudaSetDevice(readerDevice), "cudaSetDevice(reader)");
    CudaStream stream(readerDevice);
    PatternChecker checker(readerDevice);
    std::uint64_t last = 0;
    for (int verified = 0; verified < kFrames;) {
      auto f = sub.next(2s);
      if (!f) return "timeout after " + std::to_string(verified) + " frames";
      const Frame& fr = f->frame();
      if (last != 0 && fr.sequence != last + 1)
        return "frame " + std::to_string(last + 1) + " was missed (got " + std::to_string(fr.sequence) + ")";
      last = fr.sequence;
      if (fr.gpu.device != readerDevice) return "frame says device " + std::to_string(fr.gpu.device);
      const bool inRing = fr.data[0] >= ringBase && fr.data[0] < ringBase + ringBytes;
      if (info.deviceAccess == "copy" && inRing) return "a copied frame points into the ring";
      if (info.deviceAccess != "copy" && !inRing) return "an in-place frame points outside the ring";
      cuda::check(cudaStreamWaitEvent(stream.get(), static_cast<cudaEvent_t>(fr.gpu.readyEvent), 0),
                  "cudaStreamWaitEvent(readyEvent)");
      const std::uint32_t bad = checker.check(fr, layout_, fr.sequence, stream.get());
      if (!f->valid()) return "frame " + std::to_string(fr.sequence) + " was overwritten while read";
      if (bad != 0) return std::to_string(bad) + " bytes wrong in frame " + std::to_string(fr.sequence);
      ++verified;
    }
    if (sub.stats().missed != 0) return std::to_string(sub.stats().missed) + " frames missed";
    return {};
  }

  /// A ring on GPU 0 published at 60 fps; a reader process (started with `variable`=`value`)
  /// verifies kFrames with a kernel and names `access`; the publisher keeps its rate.
  void expectReaderProcessVerifiesEveryFrame(const char* variable, const char* value, const std::string& access) {
    Publisher pub(name_, SlotLayout::deviceImages(layout_, 8, 0), shareOptions());
    PacedPublisher publishing(pub, 0, layout_);
    ::setenv(variable, value, 1);
    Child reader({kGpuPeer, "read", name_, dir_, std::to_string(kFrames)});
    ::unsetenv(variable);
    const auto line = reader.readLine(60s);
    ASSERT_TRUE(line.has_value());
    EXPECT_EQ(line->rfind("ok verified=" + std::to_string(kFrames), 0), 0u) << *line;
    EXPECT_NE(line->find(access), std::string::npos) << *line;
    EXPECT_EQ(reader.wait(), 0);
    publishing.stop();
    EXPECT_TRUE(publishing.error().empty()) << publishing.error();
    EXPECT_GE(publishing.fps(), 57.0) << "the publisher slowed down";
  }

  /// Where the ring's slots are: every slot acquired at once (then abandoned), lowest to highest + one stride.
  struct Span {
    std::uint8_t* begin = nullptr;
    std::size_t bytes = 0;
  };
  static Span ringSpan(Publisher& pub, std::uint32_t slots) {
    std::vector<WriteSlot> all;
    for (std::uint32_t i = 0; i < slots; ++i) all.push_back(pub.acquireWrite());
    std::uint8_t *lo = all[0].frame().data[0], *hi = lo;
    for (auto& w : all) {
      lo = std::min(lo, w.frame().data[0]);
      hi = std::max(hi, w.frame().data[0]);
    }
    const std::size_t stride = slots > 1 ? static_cast<std::size_t>(hi - lo) / (slots - 1) : 0;
    return Span{lo, static_cast<std::size_t>(hi - lo) + stride};
  }

  const ImageLayout layout_ = testLayout();
  int devices_ = 0;
  std::optional<share_test::ShareDirectory> directory_;
  std::string dir_, name_;
};

TEST_F(MultiGpu, ForcedCopyInProcessReaderVerifiesEveryFrameWithAKernel) {
  Publisher pub(name_, SlotLayout::deviceImages(layout_, 8, 0), shareOptions());
  const Span ring = ringSpan(pub, 8);
  PacedPublisher publishing(pub, 0, layout_);
  ShareInfo info;
  const std::string error = readEveryFrame(name_, 0, true, info, ring.begin, ring.bytes);
  publishing.stop();
  EXPECT_EQ(error, "");
  EXPECT_TRUE(publishing.error().empty()) << publishing.error();
  EXPECT_EQ(info.deviceAccess, "copy");
  EXPECT_NE(info.deviceAccessReason.find("deviceAccess = copy"), std::string::npos) << info.deviceAccessReason;
  EXPECT_EQ(info.ringDevice, 0);
  EXPECT_EQ(info.readerDevice, 0);
}

TEST_F(MultiGpu, SameGpuReaderReadsInPlaceAndSaysSo) {
  Publisher pub(name_, SlotLayout::deviceImages(layout_, 8, 0), shareOptions());
  SubscribeOptions o;
  o.directory = dir_;
  Subscriber sub(name_, o);
  EXPECT_EQ(sub.info().deviceAccess, "same-gpu");
  EXPECT_EQ(sub.info().readerDevice, 0);
  o.device = devices_;  // one past the last
  try {
    Subscriber bad(name_, o);
    ADD_FAILURE() << "a reader on a device that does not exist was accepted";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), Errc::kInvalidArgument) << e.what();
  }
}

TEST_F(MultiGpu, ForcedCopyReaderProcessVerifiesEveryFrame) {
  expectReaderProcessVerifiesEveryFrame("ZEROHOP_TEST_DEVICE_ACCESS", "copy", "access=copy");
}

TEST_F(MultiGpu, PlacementOnTheRealDevicesUsesEveryOne) {
  const int count = usableGpuCount();
  ASSERT_EQ(count, devices_);
  std::vector<CameraLoadInput> cams;
  for (int i = 0; i < 2 * count; ++i) cams.push_back({"cam" + std::to_string(i), "auto", PixelFormat::kYUYV, 1920, 1080, 60});
  const auto placement = placeCameras(cams, count);
  std::vector<int> perDevice(static_cast<std::size_t>(count), 0);
  for (const auto& p : placement) {
    ASSERT_GE(p.device, 0) << p.name;
    ASSERT_LT(p.device, count) << p.name;
    ++perDevice[static_cast<std::size_t>(p.device)];
  }
  for (int d = 0; d < count; ++d) EXPECT_EQ(perDevice[static_cast<std::size_t>(d)], 2) << "GPU " << d;
  // Each camera's ring on its GPU: a pattern written there is read back by a kernel there.
  for (const auto& p : placement) {
    Publisher pub(p.name + "_" + name_, SlotLayout::deviceImages(layout_, 4, p.device), shareOptions());
    const Span ring = ringSpan(pub, 4);
    PacedPublisher publishing(pub, p.device, layout_);
    ShareInfo info;
    EXPECT_EQ(readEveryFrame(p.name + "_" + name_, p.device, false, info, ring.begin, ring.bytes), "")
        << p.name;
    EXPECT_EQ(info.ringDevice, p.device);
    EXPECT_EQ(info.deviceAccess, "same-gpu");
    if (::testing::Test::HasFailure()) break;
  }
}

/// The tests that need two GPUs: they skip with the reason on fewer (gpu-check.sh lets TwoGpus.* skip
/// on a machine with one GPU, and only those).
class TwoGpus : public MultiGpu {
 protected:
  void SetUp() override {
    MultiGpu::SetUp();
    if (IsSkipped()) return;
    if (devices_ < 2) GTEST_SKIP() << "needs two CUDA devices, this machine has " << devices_;
  }
};

TEST_F(TwoGpus, ReaderOnTheOtherGpuReadsEveryFrameAndThePublisherKeepsItsRate) {
  // A ring on each of GPU 0 and 1; a reader on the other GPU of each, in this process.
  for (const int ring : {0, 1}) {
    const int reader = 1 - ring;
    for (const bool forceCopy : {false, true}) {
      SCOPED_TRACE("ring on GPU " + std::to_string(ring) + (forceCopy ? ", forced copy" : ", auto"));
      const std::string name = "other" + std::to_string(ring) + (forceCopy ? "c" : "a");
      Publisher pub(name, SlotLayout::deviceImages(layout_, 8, ring), shareOptions());
      const Span span = ringSpan(pub, 8);
      PacedPublisher publishing(pub, ring, layout_);
      ShareInfo info;
      EXPECT_EQ(readEveryFrame(name, reader, forceCopy, info, span.begin, span.bytes), "");
      publishing.stop();
      EXPECT_TRUE(publishing.error().empty()) << publishing.error();
      EXPECT_GE(publishing.fps(), 57.0) << "the publisher slowed down";
      int can = 0;
      ASSERT_EQ(cudaDeviceCanAccessPeer(&can, reader, ring), cudaSuccess);
      EXPECT_EQ(info.deviceAccess, forceCopy || !can ? "copy" : "peer") << info.deviceAccessReason;
      EXPECT_EQ(info.ringDevice, ring);
      EXPECT_EQ(info.readerDevice, reader);
    }
  }
}

TEST_F(TwoGpus, ReaderProcessOnTheOtherGpuReadsEveryFrame) {
  int can = 0;
  ASSERT_EQ(cudaDeviceCanAccessPeer(&can, 1, 0), cudaSuccess);
  expectReaderProcessVerifiesEveryFrame("ZEROHOP_TEST_READER_DEVICE", "1", can ? "access=peer" : "access=copy");
}

}  // namespace
}  // namespace zerohop
