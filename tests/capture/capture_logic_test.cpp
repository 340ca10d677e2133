// Pure capture logic, no device: mode negotiation, FourCC names.
#include <gtest/gtest.h>

#include <vector>

#include "capture/mode_selection.hpp"
#include "zerohop/error.hpp"

namespace zerohop::capture_detail {
namespace {

CaptureFormat format(PixelFormat f, std::vector<CaptureFrameSize> sizes) {
  CaptureFormat c;
  c.format = f;
  c.fourcc = formatFourcc(f);
  c.compressed = isCompressed(f);
  c.sizes = std::move(sizes);
  return c;
}

std::vector<CaptureFormat> typicalUvcCamera() {
  // A UVC webcam: MJPEG up to 1080p30, YUYV 1080p only at 5 fps.
  return {format(PixelFormat::kMJPEG, {{640, 480, {30, 15}}, {1280, 720, {30, 15}}, {1920, 1080, {30, 15}}}),
          format(PixelFormat::kYUYV, {{640, 480, {30, 15}}, {1280, 720, {10, 5}}, {1920, 1080, {5}}})};
}

TEST(ModeSelection, ExactRequestIsExact) {
  const auto offered = typicalUvcCamera();
  const auto m = chooseMode(offered, {PixelFormat::kMJPEG, 1920, 1080, 30}, {});
  EXPECT_EQ(m.format->format, PixelFormat::kMJPEG);
  EXPECT_EQ(m.width, 1920u);
  EXPECT_EQ(m.height, 1080u);
  EXPECT_DOUBLE_EQ(m.fps, 30);
  EXPECT_TRUE(m.exact);
  EXPECT_TRUE(m.differs.empty());
}

TEST(ModeSelection, NearestSizeAndRateAreChosenAndExplained) {
  const auto offered = typicalUvcCamera();
  const auto m = chooseMode(offered, {PixelFormat::kYUYV, 1000, 600, 30}, {});
  EXPECT_EQ(m.format->format, PixelFormat::kYUYV);
  EXPECT_EQ(m.width, 1280u);  // |dw|+|dh| = 400 beats 640x480's 480
  EXPECT_EQ(m.height, 720u);
  EXPECT_DOUBLE_EQ(m.fps, 10);
  EXPECT_FALSE(m.exact);
  EXPECT_NE(m.differs.find("size 1280x720 instead of 1000x600"), std::string::npos) << m.differs;
  EXPECT_NE(m.differs.find("rate 10 fps instead of 30"), std::string::npos) << m.differs;
}

TEST(ModeSelection, MissingFormatFallsBackToSameKind) {
  const auto offered = typicalUvcCamera();
  const auto h264 = chooseMode(offered, {PixelFormat::kH264, 1280, 720, 30}, {});
  EXPECT_EQ(h264.format->format, PixelFormat::kMJPEG);  // compressed for compressed
  EXPECT_FALSE(h264.exact);
  const auto nv12 = chooseMode(offered, {PixelFormat::kNV12, 640, 480, 30}, {});
  EXPECT_EQ(nv12.format->format, PixelFormat::kYUYV);  // raw for raw
}

TEST(ModeSelection, NoPreferenceKeepsTheCurrentMode) {
  const auto offered = typicalUvcCamera();
  const auto m = chooseMode(offered, {}, {PixelFormat::kMJPEG, 1280, 720, 15});
  EXPECT_EQ(m.format->format, PixelFormat::kMJPEG);
  EXPECT_EQ(m.width, 1280u);
  EXPECT_DOUBLE_EQ(m.fps, 15);
  EXPECT_TRUE(m.exact);
}

TEST(ModeSelection, NoPreferenceAndNoCurrentModeTakesLargestAndFastest) {
  const auto offered = typicalUvcCamera();
  const auto m = chooseMode(offered, {PixelFormat::kMJPEG, 0, 0, 0}, {});
  EXPECT_EQ(m.width, 1920u);
  EXPECT_DOUBLE_EQ(m.fps, 30);
}

TEST(ModeSelection, NothingConsumableIsUnsupported) {
  CaptureFormat grey;
  grey.fourcc = 0x59455247;  // 'GREY'
  grey.sizes = {{640, 480, {30}}};
  try {
    chooseMode({grey}, {}, {});
    FAIL() << "expected an Error";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), Errc::kUnsupported);
    EXPECT_NE(std::string(e.what()).find("GREY"), std::string::npos) << e.what();
  }
}

TEST(FourccString, PrintsTheFourCharacters) {
  EXPECT_EQ(fourccString(formatFourcc(PixelFormat::kMJPEG)), "MJPG");
  EXPECT_EQ(fourccString(formatFourcc(PixelFormat::kYUYV)), "YUYV");
}

}  // namespace
}  // namespace zerohop::capture_detail
