// gpupath::makeNvdecSource on the GPU (label gpu): an H.264 FrameSource (the committed clip, one access
// unit per next(), as an RTSP camera delivers them) becomes NV12 device frames that match libavcodec's
// decode bit for bit, carry their unit's sequence, keyframe flag and capture time, and come with a
// ready event; frames held downstream past the pool are dropped and counted, never stall the source.
#include <gtest/gtest.h>

#include <deque>
#include <vector>

#include "gpu_test_support.hpp"
#include "gpupath/nvdec_source.hpp"
#include "nvdec_clip.hpp"
#include "zerohop/clock.hpp"
#include "zerohop/error.hpp"
#include "zerohop/gpu_decode.hpp"

namespace zerohop {
namespace {

/// The clip's access units as a camera's H.264 source: host frames, sequence 100 + i, capture time set.
class ClipSource final : public FrameSource {
 public:
  explicit ClipSource(const test::Clip& clip) : clip_(clip) {}
  SourceInfo info() const override {
    SourceInfo i;
    i.format = PixelFormat::kH264;
    i.width = clip_.width;
    i.height = clip_.height;
    i.fps = 30;
    i.description = "clip " + clip_.name;
    return i;
  }
  std::optional<FrameLease> next(std::chrono::milliseconds) override {
    if (next_ >= clip_.units.size()) return std::nullopt;
    const auto& unit = clip_.units[next_];
    Frame f;
    f.format = PixelFormat::kH264;
    f.memory = MemoryKind::kHost;
    f.width = clip_.width;
    f.height = clip_.height;
    f.planeCount = 1;
    f.data[0] = const_cast<std::uint8_t*>(unit.data());
    f.bytesUsed = f.capacity = unit.size();
    f.sequence = 100 + next_;
    f.keyframe = next_ == 0;
    f.times.mark(Stage::kCapture, 1'000'000 + static_cast<std::int64_t>(next_));
    f.times.mark(Stage::kIngest, monotonicNs());
    ++next_;
    ++handedOut_;
    return FrameLease(nullptr, 0, f);
  }
  SourceCounters counters() const override { return {handedOut_, 0, 0, 0}; }

 private:
  const test::Clip& clip_;
  std::size_t next_ = 0;
  std::uint64_t handedOut_ = 0;
};

class NvdecSourceTest : public test::GpuTest {
 protected:
  void SetUp() override {
    GpuTest::SetUp();
    if (IsSkipped()) return;
    const NvdecInfo nvdec = probeNvdec(device_);
    if (!nvdec.available) GTEST_SKIP() << "no NVDEC H.264 decoder: " << nvdec.reason;
  }
};

TEST_F(NvdecSourceTest, CameraUnitsBecomeBitExactDeviceFramesWithTheirTimes) {
  const test::Clip clip = test::loadClip("nvdec_baseline_320x240", 320, 240);
  auto source = gpupath::makeNvdecSource(std::make_unique<ClipSource>(clip), device_);
  const SourceInfo info = source->info();
  EXPECT_EQ(info.format, PixelFormat::kNV12);
  EXPECT_EQ(info.memory, MemoryKind::kDevice);
  EXPECT_EQ(info.width, 320u);
  EXPECT_NE(info.description.find("NVDEC"), std::string::npos) << info.description;
  std::size_t index = 0;
  while (auto lease = source->next(std::chrono::milliseconds(1000))) {
    const Frame& f = lease->frame();
    ASSERT_LT(index, clip.reference.size());
    EXPECT_EQ(f.memory, MemoryKind::kDevice);
    EXPECT_NE(f.gpu.readyEvent, nullptr);
    EXPECT_EQ(f.sequence, 100 + index);
    EXPECT_EQ(f.captureNs(), 1'000'000 + static_cast<std::int64_t>(index));
    EXPECT_EQ(test::readBack(f, device_), clip.reference[index]) << "frame " << index;
    ++index;
  }
  EXPECT_EQ(index, clip.reference.size());
  EXPECT_EQ(source->counters().drops, 0u);
}

TEST_F(NvdecSourceTest, FramesHeldDownstreamAreDroppedAndCountedNotStalled) {
  const test::Clip clip = test::loadClip("nvdec_baseline_320x240", 320, 240);
  auto source = gpupath::makeNvdecSource(std::make_unique<ClipSource>(clip), device_);
  std::deque<FrameLease> held;  // a consumer that never lets go
  std::size_t delivered = 0;
  while (auto lease = source->next(std::chrono::milliseconds(1000))) {
    held.push_back(std::move(*lease));
    ++delivered;
  }
  // Every unit was decoded (the reference chain intact); those that found no free slot were dropped.
  EXPECT_GE(delivered, 1u);
  EXPECT_EQ(delivered + source->counters().drops, clip.reference.size());
  // The last frame that made it out is still right: the drops did not break the decode.
  EXPECT_EQ(test::readBack(held.back().frame(), device_), clip.reference[delivered - 1]);
}

}  // namespace
}  // namespace zerohop
