// The compressed-frame sanity checks capture and the GPU decoder run before any decoder (pure logic).
#include "core/payload_check.hpp"

#include <gtest/gtest.h>

#include <cstdint>
#include <string>

namespace zerohop::core_detail {
namespace {

TEST(MjpegCheck, AcceptsWholeJpegWithPadding) {
  const std::uint8_t whole[] = {0xFF, 0xD8, 0xFF, 0xDB, 0x00, 0x01, 0xFF, 0xD9};
  EXPECT_EQ(mjpegDefect(whole, sizeof whole), nullptr);
  const std::uint8_t padded[] = {0xFF, 0xD8, 0x12, 0x34, 0xFF, 0xD9, 0x00, 0x00, 0x00};
  EXPECT_EQ(mjpegDefect(padded, sizeof padded), nullptr);
}

TEST(MjpegCheck, RejectsEmptyTruncatedAndHeaderless) {
  const std::uint8_t truncated[] = {0xFF, 0xD8, 0xFF, 0xDB, 0x00, 0x43, 0x01, 0x02};
  const std::uint8_t noSoi[] = {0x00, 0x00, 0xFF, 0xD9};
  EXPECT_STREQ(mjpegDefect(truncated, 0), "empty frame");
  EXPECT_STREQ(mjpegDefect(noSoi, sizeof noSoi), "no SOI marker");
  EXPECT_NE(mjpegDefect(truncated, sizeof truncated), nullptr);
  EXPECT_NE(std::string(mjpegDefect(truncated, sizeof truncated)).find("EOI"), std::string::npos);
}

TEST(AnnexBCheck, NeedsAStartCodeAndAValidNalHeader) {
  const std::uint8_t sps4[] = {0, 0, 0, 1, 0x67, 0x42};
  const std::uint8_t sps3[] = {0, 0, 1, 0x67, 0x42};
  const std::uint8_t noStart[] = {0x67, 0x42, 0x00, 0x1f};
  const std::uint8_t forbidden[] = {0, 0, 0, 1, 0xE7};
  EXPECT_EQ(annexBDefect(sps4, sizeof sps4), nullptr);
  EXPECT_EQ(annexBDefect(sps3, sizeof sps3), nullptr);
  EXPECT_STREQ(annexBDefect(sps4, 0), "empty frame");
  EXPECT_NE(annexBDefect(noStart, sizeof noStart), nullptr);
  EXPECT_NE(annexBDefect(forbidden, sizeof forbidden), nullptr);
}

}  // namespace
}  // namespace zerohop::core_detail
