#include "zerohop/pixel_format.hpp"

#include <gtest/gtest.h>

#include "zerohop/error.hpp"

namespace zerohop {
namespace {

TEST(PixelFormat, NamesRoundTrip) {
  for (auto f :
       {PixelFormat::kYUYV, PixelFormat::kUYVY, PixelFormat::kNV12, PixelFormat::kI420, PixelFormat::kRGB24,
        PixelFormat::kBGRx, PixelFormat::kRGBA, PixelFormat::kMJPEG, PixelFormat::kH264}) {
    auto parsed = parseFormat(formatName(f));
    ASSERT_TRUE(parsed.has_value()) << formatName(f);
    EXPECT_EQ(*parsed, f);
    EXPECT_EQ(formatFromFourcc(formatFourcc(f)), f);
  }
  EXPECT_EQ(parseFormat("MJPG"), PixelFormat::kMJPEG);
  EXPECT_EQ(parseFormat("YUY2"), PixelFormat::kYUYV);
  EXPECT_FALSE(parseFormat("bayer").has_value());
}

TEST(PixelFormat, Nv12LayoutIsContiguousAndAligned) {
  auto l = computeLayout(PixelFormat::kNV12, 1920, 1080, 256);
  ASSERT_EQ(l.planeCount, 2u);
  EXPECT_EQ(l.planes[0].pitch, 2048u);
  EXPECT_EQ(l.planes[0].widthBytes, 1920u);
  EXPECT_EQ(l.planes[1].offset, 2048u * 1080u);
  EXPECT_EQ(l.planes[1].rows, 540u);
  EXPECT_EQ(l.totalBytes, 2048u * 1080u + 2048u * 540u);
}

TEST(PixelFormat, I420AndPackedLayouts) {
  auto i420 = computeLayout(PixelFormat::kI420, 1280, 720);
  EXPECT_EQ(i420.totalBytes, 1280u * 720u * 3 / 2);
  EXPECT_EQ(i420.planes[2].offset, 1280u * 720u + 640u * 360u);
  EXPECT_EQ(computeLayout(PixelFormat::kYUYV, 1280, 720).totalBytes, 1280u * 720u * 2);
  EXPECT_EQ(computeLayout(PixelFormat::kRGB24, 3, 2).planes[0].pitch, 9u);
  EXPECT_EQ(computeLayout(PixelFormat::kRGB24, 3, 2, 4).planes[0].pitch, 12u);
  EXPECT_TRUE(isCompressed(PixelFormat::kMJPEG));
  EXPECT_GE(computeLayout(PixelFormat::kMJPEG, 1920, 1080).totalBytes, 1920u * 1080u * 2);
}

TEST(PixelFormat, RejectsImpossibleSizes) {
  EXPECT_THROW(computeLayout(PixelFormat::kNV12, 1281, 720), Error);
  EXPECT_THROW(computeLayout(PixelFormat::kNV12, 1280, 721), Error);
  EXPECT_THROW(computeLayout(PixelFormat::kYUYV, 0, 720), Error);
  EXPECT_THROW(computeLayout(PixelFormat::kYUYV, 64, 64, 3), Error);
  EXPECT_NO_THROW(computeLayout(PixelFormat::kYUYV, 64, 63));
  EXPECT_NO_THROW(computeLayout(PixelFormat::kRGB24, 63, 63));
}

}  // namespace
}  // namespace zerohop
