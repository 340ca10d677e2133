// PassthroughProcessor after a lost unit: the P-frames that refer to it are held back until the
// camera's next IDR (asked of the camera where it takes requests), so viewers never get a unit whose
// reference is missing; a lost unit nothing refers to (nal_ref_idc 0) holds nothing back.
#include <gtest/gtest.h>

#include <atomic>
#include <cstdint>
#include <memory>
#include <vector>

#include "encode/annexb.hpp"
#include "passthrough_processor.hpp"

namespace zerohop {
namespace {

using Bytes = std::vector<std::uint8_t>;
using namespace std::chrono_literals;

// One NAL unit with a 4-byte start code, its header byte (nal_ref_idc, type) and a payload byte.
Bytes nal(int type, std::uint8_t payload, int refIdc = 3) {
  return {0, 0, 0, 1, static_cast<std::uint8_t>((refIdc << 5) | type), payload, payload};
}

Bytes join(std::initializer_list<Bytes> parts) {
  Bytes out;
  for (const auto& p : parts) out.insert(out.end(), p.begin(), p.end());
  return out;
}

// A camera whose drops the test counts and which takes keyframe requests when `takesRequests`.
class CountingCamera final : public FrameSource {
 public:
  explicit CountingCamera(bool takesRequests) : takesRequests_(takesRequests) {}
  SourceInfo info() const override {
    return {"counting camera", PixelFormat::kH264, 640, 480, 30, {}, MemoryKind::kHost};
  }
  std::optional<FrameLease> next(std::chrono::milliseconds) override { return std::nullopt; }
  SourceCounters counters() const override {
    SourceCounters c;
    c.drops = drops.load();
    return c;
  }
  bool requestKeyframe() override {
    ++requests;
    return takesRequests_;
  }
  std::atomic<std::uint64_t> drops{0};
  int requests = 0;

 private:
  bool takesRequests_;
};

class NoSlots final : public SlotOwner {
 public:
  void releaseSlot(std::uint32_t) noexcept override {}
};

Frame h264Frame(Bytes& bytes, std::uint64_t sequence) {
  Frame f;
  f.format = PixelFormat::kH264;
  f.width = 640;
  f.height = 480;
  f.data[0] = bytes.data();
  f.bytesUsed = bytes.size();
  f.capacity = bytes.size();
  f.planeCount = 1;
  f.sequence = sequence;
  return f;
}

class PassthroughRepair : public ::testing::Test {
 protected:
  // Sends one unit through the processor: true when it came out.
  bool sent(Bytes bytes) {
    FrameLease lease(slots_, 0, h264Frame(bytes, ++sequence_));
    return processor_.process(lease) != nullptr;
  }
  void evict(Bytes bytes) { processor_.evicted(h264Frame(bytes, ++sequence_)); }

  const Bytes idr_ = join({nal(7, 1), nal(8, 2), nal(5, 3)});
  const Bytes p_ = nal(1, 4);
  CountingCamera camera_{true};
  std::shared_ptr<NoSlots> slots_ = std::make_shared<NoSlots>();
  PassthroughProcessor processor_{camera_, camera_.info()};
  std::uint64_t sequence_ = 0;
};

TEST_F(PassthroughRepair, AUnitTheQueueDroppedHoldsBackTheRestUntilTheNextIdrAskedOfTheCamera) {
  ASSERT_TRUE(sent(idr_));
  ASSERT_TRUE(sent(p_));
  evict(p_);
  EXPECT_FALSE(sent(p_)) << "refers to the unit dropped";
  EXPECT_FALSE(sent(p_));
  EXPECT_EQ(camera_.requests, 1) << "one request for the loss, not one a unit";
  EXPECT_EQ(processor_.unitsHeldBack(), 2u);
  EXPECT_TRUE(sent(idr_)) << "the IDR makes the picture whole again";
  EXPECT_TRUE(sent(p_));
  EXPECT_EQ(processor_.unitsHeldBack(), 2u);
}

TEST_F(PassthroughRepair, AnIdrTheQueueDroppedHoldsBackItsPFrames) {
  ASSERT_TRUE(sent(idr_));
  evict(idr_);
  EXPECT_FALSE(sent(p_));
  EXPECT_TRUE(sent(idr_));
}

TEST_F(PassthroughRepair, ADroppedUnitNothingRefersToHoldsNothingBack) {
  ASSERT_TRUE(sent(idr_));
  evict(nal(1, 9, /*refIdc=*/0));
  EXPECT_TRUE(sent(p_));
  EXPECT_EQ(processor_.unitsHeldBack(), 0u);
  EXPECT_EQ(camera_.requests, 0);
}

TEST_F(PassthroughRepair, ADropTheSourceCountedHoldsBackUntilTheNextIdr) {
  ASSERT_TRUE(sent(idr_));
  ASSERT_TRUE(sent(p_));
  camera_.drops = 1;  // RTP packets lost before the depayloader, a V4L2 sequence gap
  EXPECT_FALSE(sent(p_));
  EXPECT_TRUE(sent(idr_)) << "an IDR right after the gap is whole";
  EXPECT_TRUE(sent(p_));
  camera_.drops = 2;
  EXPECT_TRUE(sent(idr_)) << "a gap just before an IDR costs nothing";
  EXPECT_EQ(processor_.unitsHeldBack(), 1u);
}

TEST(PassthroughRepairNoControl, ACameraThatTakesNoRequestsIsWaitedFor) {
  CountingCamera camera(false);
  PassthroughProcessor processor(camera, camera.info());
  auto slots = std::make_shared<NoSlots>();
  Bytes idr = join({nal(7, 1), nal(8, 2), nal(5, 3)});
  Bytes p = nal(1, 4);
  std::uint64_t sequence = 0;
  auto sent = [&](Bytes& b) {
    FrameLease lease(slots, 0, h264Frame(b, ++sequence));
    return processor.process(lease) != nullptr;
  };
  ASSERT_TRUE(sent(idr));
  camera.drops = 1;
  for (int i = 0; i < 30; ++i) EXPECT_FALSE(sent(p)) << "P-frame " << i << " after the loss";
  EXPECT_EQ(camera.requests, 1);
  EXPECT_EQ(processor.unitsHeldBack(), 30u);
  EXPECT_TRUE(sent(idr));
  EXPECT_TRUE(sent(p));
}

TEST(AnnexB, AUnitIsReferencedWhenOneOfItsSlicesHasANonzeroNalRefIdc) {
  const Bytes referenced = join({nal(9, 0, 0), nal(1, 1, 2)});
  const Bytes disposable = join({nal(9, 0, 0), nal(6, 1, 0), nal(1, 2, 0)});
  const Bytes headersOnly = join({nal(7, 1), nal(8, 2)});
  EXPECT_TRUE(encode::isReferenced(referenced.data(), referenced.size()));
  EXPECT_FALSE(encode::isReferenced(disposable.data(), disposable.size()));
  EXPECT_FALSE(encode::isReferenced(headersOnly.data(), headersOnly.size())) << "no slice at all";
}

}  // namespace
}  // namespace zerohop
