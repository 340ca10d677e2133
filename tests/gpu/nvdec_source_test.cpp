// gpupath::makeNvdecSource on the GPU (label gpu): an H.264 FrameSource (the committed clip, one access
// unit per next(), as an RTSP camera delivers them) becomes NV12 device frames that match libavcodec's
// decode bit for bit, carry their unit's sequence, keyframe flag and capture time, and come with a
// ready event; frames held downstream past the pool are dropped and counted, never stall the source.
// An H.265 camera's units the same, through NVDEC's HEVC decoder.
#include "gpupath/nvdec_source.hpp"

#include <gtest/gtest.h>

#include <cstdio>
#include <deque>
#include <tuple>
#include <vector>

#include "gpu_test_support.hpp"
#include "nvdec_clip.hpp"
#include "zerohop/buffer_pool.hpp"
#include "zerohop/clock.hpp"
#include "zerohop/error.hpp"
#include "zerohop/gpu.hpp"
#include "zerohop/gpu_decode.hpp"

namespace zerohop {
namespace {

/// The clip's access units as a camera's H.264 source: host frames, sequence 100 + i, capture time set.
class ClipSource final : public FrameSource {
 public:
  /// `format`: kH264, or kUnknown as an H.265 camera's source says (PixelFormat has no H.265).
  explicit ClipSource(const test::Clip& clip, PixelFormat format = PixelFormat::kH264)
      : clip_(clip), format_(format) {}
  SourceInfo info() const override {
    SourceInfo i;
    i.format = format_;
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
    f.format = format_;
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
  PixelFormat format_;
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

// An H.265 camera (issue 38): its units, as RtspSource delivers them (format kUnknown), decoded by NVDEC's
// HEVC decoder match libavcodec's HEVC decode bit for bit.
TEST_F(NvdecSourceTest, H265CameraUnitsBecomeBitExactDeviceFrames) {
  const test::Clip clip = test::loadClip("nvdec_hevc_main_320x240", 320, 240);
  ASSERT_EQ(clip.units.size(), 30u);
  auto source = gpupath::makeNvdecSource(std::make_unique<ClipSource>(clip, PixelFormat::kUnknown), device_,
                                         GpuDecodeCodec::kH265);
  EXPECT_EQ(source->info().format, PixelFormat::kNV12);
  std::size_t index = 0;
  while (auto lease = source->next(std::chrono::milliseconds(1000))) {
    const Frame& f = lease->frame();
    ASSERT_LT(index, clip.reference.size());
    EXPECT_EQ(f.sequence, 100 + index);
    EXPECT_EQ(test::readBack(f, device_), clip.reference[index]) << "frame " << index;
    ++index;
  }
  EXPECT_EQ(index, clip.reference.size());
  EXPECT_EQ(source->counters().drops, 0u);
}

// The H.264 decoder given H.265 (a camera that changed codec, a wrong setting), and the H.265 one given
// H.264, never hand out a picture: NVDEC's parser finds no sequence header of its codec (measured on an
// H100: no callback, no error), or one of the other codec's is refused by name (kUnsupported).
TEST_F(NvdecSourceTest, AStreamOfTheOtherCodecGivesNoPicture) {
  const test::Clip hevc = test::loadClip("nvdec_hevc_main_320x240", 320, 240);
  const test::Clip avc = test::loadClip("nvdec_baseline_320x240", 320, 240);
  for (const auto& [clip, codec, name] : {std::tuple{&hevc, GpuDecodeCodec::kH264, "H.264"},
                                          std::tuple{&avc, GpuDecodeCodec::kH265, "H.265"}}) {
    GpuH264Decoder decoder(device_, codec);
    BufferPool pool = test::nv12DevicePool(320, 240, 2, makeDeviceAllocator(device_));
    auto slot = pool.tryAcquire();
    ASSERT_TRUE(slot);
    int pictures = 0;
    std::string error;
    for (const auto& unit : clip->units) {
      try {
        pictures += decoder.decode(unit.data(), unit.size(), slot->frame()) ? 1 : 0;
      } catch (const Error& e) {
        error = e.what();
        break;
      }
    }
    EXPECT_EQ(pictures, 0) << name << " decoder on the other codec's stream";
    if (!error.empty()) {
      EXPECT_NE(error.find(std::string("not an ") + name + " stream"), std::string::npos) << error;
    }
    std::printf("%s decoder fed the other codec: %d pictures, %s\n", name, pictures,
                error.empty() ? "no error (no sequence header of its codec)" : error.c_str());
  }
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
