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
  // Sends one unit through the processor as the pipeline does (arrived() on its way into the queue,
  // then process()): true when it came out.
  bool sent(Bytes bytes) {
    FrameLease lease(slots_, 0, h264Frame(bytes, ++sequence_));
    processor_.arrived(lease.frame());
    return processor_.process(lease) != nullptr;
  }
  void evict(Bytes bytes) {
    Frame f = h264Frame(bytes, ++sequence_);
    processor_.arrived(f);
    processor_.evicted(f);
  }
  // The two halves apart, at a given sequence: the queue between them holds several units.
  void arrive(Bytes& bytes, std::uint64_t sequence) { processor_.arrived(h264Frame(bytes, sequence)); }
  bool process(Bytes bytes, std::uint64_t sequence) {
    FrameLease lease(slots_, 0, h264Frame(bytes, sequence));
    return processor_.process(lease) != nullptr;
  }

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

// The queue kept an IDR and dropped units on both sides of it (found in CI under load: a P-frame sent
// after the IDR referred to a unit dropped after that IDR). The IDR mends what was lost before it only.
TEST_F(PassthroughRepair, AUnitDroppedAfterAQueuedIdrHoldsBackWhatFollowsIt) {
  Bytes idr = idr_, p = p_;
  ASSERT_TRUE(sent(idr_));  // 1
  ASSERT_TRUE(sent(p_));    // 2
  for (std::uint64_t seq : {3, 4, 5, 6}) arrive(seq == 4 ? idr : p, seq);
  processor_.evicted(h264Frame(p, 3));
  processor_.evicted(h264Frame(p, 5));  // after the IDR at 4, still queued
  EXPECT_TRUE(process(idr_, 4));
  EXPECT_FALSE(process(p_, 6)) << "refers to unit 5, dropped";
  arrive(idr, 7);
  arrive(p, 8);
  EXPECT_TRUE(process(idr_, 7));
  EXPECT_TRUE(process(p_, 8));
  EXPECT_EQ(processor_.unitsHeldBack(), 1u);
}

// The source counts a drop on a unit that arrives after an IDR still queued: the loss lies after that
// IDR, so the units before it go out and the IDR does not mend it.
TEST_F(PassthroughRepair, ASourceDropAfterAQueuedIdrIsPlacedWhereItHappened) {
  Bytes idr = idr_, p = p_;
  ASSERT_TRUE(sent(idr_));  // 1
  arrive(p, 2);
  arrive(idr, 3);
  camera_.drops = 1;  // the depayloader marked unit 4: packets lost between 3 and 4
  arrive(p, 4);
  EXPECT_TRUE(process(p_, 2)) << "before the loss";
  EXPECT_TRUE(process(idr_, 3));
  EXPECT_FALSE(process(p_, 4)) << "after the loss, after the IDR at 3";
  EXPECT_EQ(processor_.unitsHeldBack(), 1u);
}

// A source that restarts its numbering (a V4L2 camera reopened) is waited for to its next IDR, and
// the old numbering's breaks do not hold the new one back.
TEST_F(PassthroughRepair, ASequenceThatGoesBackWaitsForAnIdrThenFlows) {
  Bytes idr = idr_, p = p_;
  ASSERT_TRUE(sent(idr_));
  evict(p_);  // a break at a high position of the old numbering
  arrive(p, 1);
  EXPECT_FALSE(process(p_, 1));
  arrive(idr, 2);
  EXPECT_TRUE(process(idr_, 2));
  arrive(p, 3);
  EXPECT_TRUE(process(p_, 3)) << "the old numbering's break no longer holds";
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
    processor.arrived(lease.frame());
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
