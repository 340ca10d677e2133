#include "zerohop/timecode.hpp"

#include <gtest/gtest.h>

#include <random>

#include "zerohop/buffer_pool.hpp"

namespace zerohop {
namespace {

class TimecodeRoundTrip : public ::testing::TestWithParam<std::tuple<PixelFormat, std::uint32_t, std::uint32_t>> {};

TEST_P(TimecodeRoundTrip, ReadsBackWhatWasDrawn) {
  auto [format, w, h] = GetParam();
  BufferPool pool(computeLayout(format, w, h, 64), 1, makeHostAllocator());
  auto lease = pool.tryAcquire();
  ASSERT_TRUE(lease);
  std::mt19937 rng(42);
  // Random background so the reader cannot pass on an empty image.
  for (std::size_t i = 0; i < pool.layout().totalBytes; ++i) lease->frame().data[0][i] = static_cast<std::uint8_t>(rng());
  EXPECT_FALSE(readTimecode(lease->frame()).has_value());
  const Timecode tc{1'790'000'123'456ull, 987'654};
  ASSERT_TRUE(drawTimecode(lease->frame(), tc));
  auto back = readTimecode(lease->frame());
  ASSERT_TRUE(back.has_value());
  EXPECT_EQ(back->wallClockMs, tc.wallClockMs & kTimecodeMsMask);
  EXPECT_EQ(back->sequence, tc.sequence & kTimecodeSeqMask);
}

INSTANTIATE_TEST_SUITE_P(Formats, TimecodeRoundTrip,
                         ::testing::Values(std::tuple{PixelFormat::kYUYV, 1280u, 720u},
                                           std::tuple{PixelFormat::kUYVY, 640u, 480u},
                                           std::tuple{PixelFormat::kNV12, 1920u, 1080u},
                                           std::tuple{PixelFormat::kI420, 3840u, 2160u},
                                           std::tuple{PixelFormat::kI420, 320u, 240u}));

TEST(Timecode, SurvivesMildNoiseAndRejectsCorruption) {
  BufferPool pool(computeLayout(PixelFormat::kI420, 1280, 720), 1, makeHostAllocator());
  auto lease = pool.tryAcquire();
  auto& f = lease->frame();
  ASSERT_TRUE(drawTimecode(f, Timecode{123456789, 42}));
  std::mt19937 rng(7);
  std::uniform_int_distribution<int> noise(-40, 40);
  const auto cell = timecodeCellSize(1280);
  for (std::uint32_t y = 0; y < cell; ++y)
    for (std::uint32_t x = 0; x < cell * kTimecodeCells; ++x) {
      int v = f.data[0][y * f.pitch[0] + x] + noise(rng);
      f.data[0][y * f.pitch[0] + x] = static_cast<std::uint8_t>(std::clamp(v, 0, 255));
    }
  auto back = readTimecode(f);
  ASSERT_TRUE(back);
  EXPECT_EQ(back->sequence, 42u);
  // Flip one payload cell: the CRC must catch it.
  for (std::uint32_t y = 0; y < cell; ++y)
    for (std::uint32_t x = 10 * cell; x < 11 * cell; ++x) f.data[0][y * f.pitch[0] + x] ^= 0xff;
  EXPECT_FALSE(readTimecode(f).has_value());
}

TEST(Timecode, TooNarrowFramesAreRefused) {
  BufferPool pool(computeLayout(PixelFormat::kI420, 64, 64), 1, makeHostAllocator());
  auto lease = pool.tryAcquire();
  EXPECT_FALSE(drawTimecode(lease->frame(), Timecode{1, 1}));
}

TEST(Timecode, Crc8MatchesKnownVector) {
  const std::uint8_t check[] = {'1', '2', '3', '4', '5', '6', '7', '8', '9'};
  EXPECT_EQ(crc8(check, sizeof check), 0xF4);  // CRC-8/SMBUS check value
}

}  // namespace
}  // namespace zerohop
