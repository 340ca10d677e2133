// FrameInput (zerohop/frame_input.hpp): a program's frames handed to a pipeline in process, through
// the source a pipeline reads (openSource). No pipeline here: the test reads the source as the
// pipeline's capture thread does.
#include "zerohop/frame_input.hpp"

#include <gtest/gtest.h>

#include <chrono>
#include <cstring>
#include <thread>
#include <vector>

#include "zerohop/error.hpp"

namespace zerohop {
namespace {

using namespace std::chrono_literals;

FrameInputConfig smallNv12(std::uint32_t slots = 2) {
  FrameInputConfig c;
  c.format = PixelFormat::kNV12;
  c.width = 64;
  c.height = 32;
  c.fps = 30;
  c.slots = slots;
  c.acquireTimeout = 1000ms;
  return c;
}

/// Writes `value` into every byte of the slot's planes, commits it as sequence `value`.
void commitFilled(FrameInput& input, std::uint8_t value) {
  InputSlot slot = input.acquireWrite();
  ASSERT_TRUE(slot);
  Frame& f = slot.frame();
  std::memset(f.data[0], value, std::size_t{f.pitch[0]} * f.height);
  std::memset(f.data[1], value, std::size_t{f.pitch[1]} * (f.height / 2));
  Frame meta;
  meta.sequence = value;
  input.commit(std::move(slot), meta);
}

TEST(FrameInput, CommittedFramesReachTheSourceInOrderWithTheirPixelsAndTimes) {
  FrameInput input(smallNv12(4));
  auto source = input.openSource({});
  const SourceInfo info = source->info();
  EXPECT_EQ(info.format, PixelFormat::kNV12);
  EXPECT_EQ(info.width, 64u);
  EXPECT_EQ(info.memory, MemoryKind::kHost);
  EXPECT_NE(info.description.find("in process"), std::string::npos) << info.description;
  for (std::uint8_t v : {1, 2, 3}) commitFilled(input, v);
  for (std::uint8_t v : {1, 2, 3}) {
    auto lease = source->next(1s);
    ASSERT_TRUE(lease);
    EXPECT_EQ(lease->frame().sequence, v);
    EXPECT_EQ(lease->frame().data[0][0], v);
    EXPECT_EQ(lease->frame().data[1][lease->frame().pitch[1] * 15 + 63], v);
    EXPECT_GT(lease->frame().captureNs(), 0);
    EXPECT_GE(lease->frame().times.at(Stage::kIngest), lease->frame().captureNs());
  }
  EXPECT_FALSE(source->next(20ms));  // nothing more was committed
  EXPECT_EQ(source->counters().frames, 3u);
  EXPECT_EQ(source->counters().drops, 0u);
  EXPECT_EQ(input.stats().committed, 3u);
}

TEST(FrameInput, PastTheQueueDepthTheOldestFramesAreDroppedAndCounted) {
  FrameInput input(smallNv12(2));
  auto source = input.openSource({});
  for (std::uint8_t v = 1; v <= 5; ++v) commitFilled(input, v);  // nobody reads: 1, 2, 3 give way
  auto a = source->next(1s);
  auto b = source->next(1s);
  ASSERT_TRUE(a && b);
  EXPECT_EQ(a->frame().sequence, 4u);
  EXPECT_EQ(b->frame().sequence, 5u);
  EXPECT_EQ(source->counters().drops, 3u);
  EXPECT_EQ(input.stats().dropped, 3u);
}

// The program never waits for a slow reader: with every slot queued, acquireWrite takes the oldest
// queued frame's slot. It waits only while every slot is held, and a lease given back ends the wait.
TEST(FrameInput, SlotsHeldByThePipelineComeBackWhenItsLeasesEnd) {
  FrameInput input(smallNv12(1));
  auto source = input.openSource({});
  const std::uint32_t slots = input.stats().slots;
  std::vector<FrameLease> held;  // the pipeline holding frames (encode queue, converter)
  for (std::uint32_t i = 0; i < slots; ++i) {
    commitFilled(input, static_cast<std::uint8_t>(i + 1));
    auto lease = source->next(1s);
    ASSERT_TRUE(lease);
    held.push_back(std::move(*lease));
  }
  try {
    (void)input.acquireWrite();
    ADD_FAILURE() << "acquired a slot while the pipeline held all " << slots;
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), Errc::kUnavailable);
    EXPECT_NE(std::string(e.what()).find("commit or drop"), std::string::npos) << e.what();
  }
  std::thread giveBack([&] { held.pop_back(); });  // the pipeline's thread ends a lease
  InputSlot slot = input.acquireWrite();  // takes that slot (waiting for it, bounded, if it is not back yet)
  giveBack.join();
  EXPECT_TRUE(slot);
}

TEST(FrameInput, PublishCopiesAFrameOfAnotherPitchRowByRow) {
  FrameInput input(smallNv12(2));
  auto source = input.openSource({});
  std::vector<std::uint8_t> y(100 * 32), uv(100 * 16);
  for (std::size_t r = 0; r < 32; ++r) std::memset(y.data() + r * 100, static_cast<int>(r), 100);
  std::memset(uv.data(), 7, uv.size());
  Frame f;
  f.format = PixelFormat::kNV12;
  f.width = 64;
  f.height = 32;
  f.planeCount = 2;
  f.data = {y.data(), uv.data(), nullptr};
  f.pitch = {100, 100, 0};
  f.sequence = 9;
  input.publish(f);
  auto lease = source->next(1s);
  ASSERT_TRUE(lease);
  const Frame& got = lease->frame();
  EXPECT_EQ(got.sequence, 9u);
  for (std::uint32_t r = 0; r < 32; ++r) EXPECT_EQ(got.data[0][r * got.pitch[0] + 63], r) << "row " << r;
  EXPECT_EQ(got.data[1][got.pitch[1] * 15 + 63], 7);
  EXPECT_EQ(input.stats().bytesCopied, 64u * 32 + 64u * 16);
  f.width = 32;
  EXPECT_THROW(input.publish(f), Error);  // another size
}

TEST(FrameInput, ClosingEndsTheSourceWhileItsFramesStayValid) {
  auto input = std::make_unique<FrameInput>(smallNv12(2));
  auto source = input->openSource({});
  commitFilled(*input, 5);
  auto lease = source->next(1s);
  ASSERT_TRUE(lease);
  commitFilled(*input, 6);
  input.reset();  // the program's input goes away first
  EXPECT_FALSE(source->next(20ms));  // the queued frame went with it
  EXPECT_EQ(lease->frame().data[0][0], 5);  // the pool outlives the input while a frame is held
  lease->reset();
  source.reset();
}

TEST(FrameInput, RefusesWhatItCannotTakeSayingWhy) {
  FrameInputConfig mjpeg = smallNv12();
  mjpeg.format = PixelFormat::kMJPEG;
  EXPECT_THROW(FrameInput{mjpeg}, Error);
  FrameInputConfig fast = smallNv12();
  fast.fps = 1000;
  EXPECT_THROW(FrameInput{fast}, Error);

  FrameInput a(smallNv12()), b(smallNv12());
  try {
    (void)a.acquireWrite();
    ADD_FAILURE() << "acquired before a pipeline opened the source";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), Errc::kUnavailable);
  }
  auto sa = a.openSource({});
  auto sb = b.openSource({});
  EXPECT_THROW(a.openSource({}), Error);  // one pipeline reads an input
  InputSlot fromB = b.acquireWrite();
  try {
    a.commit(std::move(fromB), Frame{});
    ADD_FAILURE() << "committed another input's slot";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), Errc::kInvalidArgument);
    EXPECT_NE(std::string(e.what()).find("another FrameInput"), std::string::npos) << e.what();
  }
  EXPECT_THROW(a.commit(InputSlot{}, Frame{}), Error);
}

}  // namespace
}  // namespace zerohop
