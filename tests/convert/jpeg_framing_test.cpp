// The structural JPEG checks run before any decoder sees a frame.
#include "convert/jpeg_framing.hpp"

#include <gtest/gtest.h>

#include <vector>

namespace zerohop::convert {
namespace {

std::string problem(const std::vector<std::uint8_t>& b) {
  return jpegFramingProblem(b.data(), b.size());
}

TEST(JpegFraming, AcceptsSoiToEoiAndTrailingZeroPadding) {
  EXPECT_EQ(problem({0xFF, 0xD8, 0xFF, 0xDB, 0x00, 0x01, 0xFF, 0xD9}), "");
  EXPECT_EQ(problem({0xFF, 0xD8, 0xFF, 0xDB, 0x00, 0x01, 0xFF, 0xD9, 0x00, 0x00, 0x00}), "");
  const std::vector<std::uint8_t> padded{0xFF, 0xD8, 0x11, 0xFF, 0xD9, 0x00, 0x00};
  EXPECT_EQ(jpegTrimmedSize(padded.data(), padded.size()), 5u);
}

TEST(JpegFraming, RejectsEmptyMissingSoiAndMissingEoi) {
  EXPECT_NE(problem({}).find("empty"), std::string::npos);
  EXPECT_NE(jpegFramingProblem(nullptr, 10).find("empty"), std::string::npos);
  EXPECT_NE(problem({0xFF}).find("SOI"), std::string::npos);
  EXPECT_NE(problem({0x00, 0xD8, 0xFF, 0xD9}).find("SOI"), std::string::npos);
  EXPECT_NE(problem({0xFF, 0xD8, 0xFF, 0xDB, 0x00}).find("EOI"), std::string::npos);
  EXPECT_NE(problem({0xFF, 0xD8, 0xFF, 0xDB, 0x00, 0xD9}).find("EOI"), std::string::npos);
  EXPECT_NE(problem({0xFF, 0xD8, 0xD9}).find("EOI"), std::string::npos) << "SOI's own bytes are not an EOI";
  EXPECT_NE(problem({0xFF, 0xD8, 0x00, 0x00}).find("EOI"), std::string::npos);
}

}  // namespace
}  // namespace zerohop::convert
