#include <gtest/gtest.h>

#include <set>
#include <thread>

#include "zerohop/error.hpp"

#include "zerohop/source.hpp"
#include "zerohop/timecode.hpp"

namespace zerohop {
namespace {

TEST(PatternCamera, DeliversPacedFramesWithTimecodeAndStageTimes) {
  auto cam = openSource(parseSourceSpec("test:640x360@60"));
  const auto info = cam->info();
  EXPECT_EQ(info.format, PixelFormat::kYUYV);
  std::uint64_t firstSeq = 0, lastSeq = 0;
  std::int64_t firstCapture = 0, lastCapture = 0;
  for (int i = 0; i < 12; ++i) {
    auto lease = cam->next(std::chrono::milliseconds(500));
    ASSERT_TRUE(lease);
    const Frame& f = lease->frame();
    auto tc = readTimecode(f);
    ASSERT_TRUE(tc.has_value()) << "frame " << i;
    EXPECT_EQ(tc->sequence, f.sequence & kTimecodeSeqMask);
    EXPECT_EQ(tc->wallClockMs, static_cast<std::uint64_t>(f.wallClockMs) & kTimecodeMsMask);
    EXPECT_GT(f.times.at(Stage::kIngest), f.times.at(Stage::kCapture) - 1);
    if (i > 0) {
      EXPECT_GT(f.sequence, lastSeq);
    }
    lastSeq = f.sequence;
    if (i == 0) {
      firstSeq = f.sequence;
      firstCapture = f.captureNs();
    }
    lastCapture = f.captureNs();
  }
  // Paced: one period of 1/60 s per sequence number between the first and the last frame. A loaded
  // machine (sanitizers) may make the loop miss frames, which the camera counts as drops; the pace of
  // the frames it did deliver is what this checks.
  const auto periods = static_cast<double>(lastSeq - firstSeq);
  EXPECT_GE(periods, 11.0);
  EXPECT_NEAR(static_cast<double>(lastCapture - firstCapture) / 1e9, periods / 60.0, 1e-3);
}

TEST(PatternCamera, PictureChangesBetweenFrames) {
  auto cam = openSource(parseSourceSpec("test:640x360@120"));
  auto a = cam->next(std::chrono::milliseconds(500));
  ASSERT_TRUE(a);
  std::vector<std::uint8_t> first(a->frame().data[0] + 360 / 2 * a->frame().pitch[0],
                                  a->frame().data[0] + 360 / 2 * a->frame().pitch[0] + 1280);
  a->reset();
  auto b = cam->next(std::chrono::milliseconds(500));
  ASSERT_TRUE(b);
  std::vector<std::uint8_t> second(b->frame().data[0] + 360 / 2 * b->frame().pitch[0],
                                   b->frame().data[0] + 360 / 2 * b->frame().pitch[0] + 1280);
  EXPECT_NE(first, second);
  std::set<std::uint8_t> distinct(second.begin(), second.end());
  EXPECT_GT(distinct.size(), 40u) << "a flat picture costs an encoder nothing";
}

TEST(PatternCamera, SlowConsumerCausesCountedDropsNotBlocking) {
  auto cam = openSource(parseSourceSpec("test:640x360@100"));
  auto first = cam->next(std::chrono::milliseconds(500));
  ASSERT_TRUE(first);
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  auto second = cam->next(std::chrono::milliseconds(500));
  ASSERT_TRUE(second);
  EXPECT_GE(second->frame().sequence - first->frame().sequence, 5u);
  EXPECT_GE(cam->counters().drops, 5u);
}

TEST(PatternCamera, RejectsFormatsItCannotRender) {
  EXPECT_THROW(openSource(parseSourceSpec("test:640x360@30?format=mjpeg")), Error);
}

}  // namespace
}  // namespace zerohop
