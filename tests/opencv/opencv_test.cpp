// zerohop/opencv.hpp on the host: cv::Mat views over a frame's planes and over a SharedFrame's
// (read-only ring mappings) are the planes, byte for byte and pointer for pointer; the packed and
// 4:2:0 helpers feed cv::cvtColor.
#include "zerohop/opencv.hpp"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cstring>
#include <opencv2/imgproc.hpp>

namespace zerohop {
namespace {

using namespace std::chrono_literals;

struct OwnedFrame {
  std::vector<std::uint8_t> bytes;
  Frame frame;
};

OwnedFrame makeFrame(PixelFormat format, std::uint32_t w, std::uint32_t h, std::uint32_t align) {
  OwnedFrame o;
  const auto layout = computeLayout(format, w, h, align);
  o.bytes.resize(layout.totalBytes);
  for (std::size_t i = 0; i < o.bytes.size(); ++i) o.bytes[i] = static_cast<std::uint8_t>(i * 31 + (i >> 9));
  bindLayout(o.frame, layout, o.bytes.data(), MemoryKind::kHost);
  o.frame.format = format;
  o.frame.width = w;
  o.frame.height = h;
  return o;
}

// Every view is its plane: same pointer, same step, and the bytes of each row.
void expectViewsArePlanes(const Frame& f) {
  const auto layout = computeLayout(f.format, f.width, f.height);
  const auto mats = opencv::planeMats(f);
  ASSERT_EQ(mats.size(), layout.planeCount);
  for (std::uint32_t p = 0; p < layout.planeCount; ++p) {
    const cv::Mat& m = mats[p];
    EXPECT_EQ(m.data, f.data[p]) << "plane " << p << ": a copy, not a view";
    EXPECT_EQ(m.step[0], f.pitch[p]);
    EXPECT_EQ(static_cast<std::uint32_t>(m.rows), layout.planes[p].rows);
    ASSERT_EQ(m.cols * m.elemSize(), layout.planes[p].widthBytes) << "plane " << p;
    for (int r = 0; r < m.rows; ++r) {
      ASSERT_EQ(std::memcmp(m.ptr(r), f.data[p] + std::size_t(r) * f.pitch[p], layout.planes[p].widthBytes),
                0)
          << "plane " << p << " row " << r;
    }
  }
}

TEST(OpenCvViews, EveryFormatsPlanesByteForByte) {
  for (auto fmt : {PixelFormat::kNV12, PixelFormat::kI420, PixelFormat::kYUYV, PixelFormat::kUYVY,
                   PixelFormat::kRGB24, PixelFormat::kBGRx, PixelFormat::kRGBA}) {
    SCOPED_TRACE(std::string(formatName(fmt)));
    auto o = makeFrame(fmt, 320, 180, 64);  // padded rows: step != cols * elemSize
    expectViewsArePlanes(o.frame);
  }
  auto nv12 = makeFrame(PixelFormat::kNV12, 64, 32, 1);
  EXPECT_EQ(opencv::planeMat(nv12.frame, 1).type(), CV_8UC2);
  auto yuyv = makeFrame(PixelFormat::kYUYV, 64, 32, 1);
  EXPECT_EQ(opencv::imageMat(yuyv.frame).type(), CV_8UC2);
  EXPECT_EQ(opencv::imageMat(makeFrame(PixelFormat::kRGB24, 8, 8, 1).frame).type(), CV_8UC3);
}

TEST(OpenCvViews, SharedFrameViewsAreTheRing) {
  const auto layout = computeLayout(PixelFormat::kI420, 320, 240, 64);
  Publisher pub("cv-" + std::to_string(getpid()), SlotLayout::images(layout, 3));
  Subscriber sub(pub.name());
  auto src = makeFrame(PixelFormat::kI420, 320, 240, 16);
  pub.publish(src.frame);
  auto shared = sub.next(1000ms);
  ASSERT_TRUE(shared);
  expectViewsArePlanes(shared->frame());
  // ...and hold what was published (the ring's pitch differs from the source's).
  const auto mats = opencv::planeMats(*shared);
  for (std::uint32_t p = 0; p < 3; ++p) {
    for (int r = 0; r < mats[p].rows; ++r) {
      ASSERT_EQ(std::memcmp(mats[p].ptr(r), src.frame.data[p] + std::size_t(r) * src.frame.pitch[p],
                            layout.planes[p].widthBytes),
                0);
    }
  }
  EXPECT_TRUE(shared->valid());
}

TEST(OpenCvViews, Yuv420AndPackedFeedCvtColor) {
  // Mid grey in limited-range BT.601: Y 126, U = V = 128 -> (126 - 16) * 255 / 219 = 128 in BGR.
  auto nv12 = makeFrame(PixelFormat::kNV12, 64, 32, 1);
  std::memset(nv12.bytes.data(), 126, 64 * 32);
  std::memset(nv12.bytes.data() + 64 * 32, 128, 64 * 16);
  cv::Mat bgr;
  cv::cvtColor(opencv::yuv420Mat(nv12.frame), bgr, cv::COLOR_YUV2BGR_NV12);
  ASSERT_EQ(bgr.size(), cv::Size(64, 32));
  const auto px = bgr.at<cv::Vec3b>(10, 10);
  for (int c = 0; c < 3; ++c) EXPECT_NEAR(px[c], 128, 2) << c;

  auto rgba = makeFrame(PixelFormat::kRGBA, 16, 8, 1);
  cv::Mat gray;
  cv::cvtColor(opencv::imageMat(rgba.frame), gray, cv::COLOR_RGBA2GRAY);
  EXPECT_EQ(gray.size(), cv::Size(16, 8));

  auto padded = makeFrame(PixelFormat::kI420, 100, 20, 64);  // luma pitch 128, chroma pitch 64: back to back
  EXPECT_NO_THROW(opencv::yuv420Mat(padded.frame));
  Frame split = padded.frame;
  split.data[1] += 64;  // planes not back to back
  EXPECT_THROW(opencv::yuv420Mat(split), Error);
}

TEST(OpenCvViews, WrongKindOrPlaneIsAnError) {
  auto nv12 = makeFrame(PixelFormat::kNV12, 64, 32, 1);
  EXPECT_THROW(opencv::planeMat(nv12.frame, 2), Error);
  EXPECT_THROW(opencv::imageMat(nv12.frame), Error);
  EXPECT_THROW(opencv::planeGpuMat(nv12.frame, 0), Error);  // host memory
  Frame device = nv12.frame;
  device.memory = MemoryKind::kDevice;
  EXPECT_THROW(opencv::planeMat(device, 0), Error);
  Frame h264;
  h264.format = PixelFormat::kH264;
  h264.planeCount = 1;
  EXPECT_THROW(opencv::planeMat(h264, 0), Error);
}

TEST(OpenCvViews, GpuMatOverADevicePointerNeedsNoCuda) {
  // The data-pointer constructor is OpenCV core's: it builds with a CUDA-less OpenCV and never
  // touches the pointer. A fake device address stands in for a device plane.
  auto nv12 = makeFrame(PixelFormat::kNV12, 64, 32, 64);
  Frame device = nv12.frame;
  device.memory = MemoryKind::kDevice;
  const auto g = opencv::planeGpuMat(device, 1);
  EXPECT_EQ(g.data, device.data[1]);
  EXPECT_EQ(g.step, device.pitch[1]);
  EXPECT_EQ(g.type(), CV_8UC2);
  EXPECT_EQ(g.size(), cv::Size(32, 16));
}

}  // namespace
}  // namespace zerohop
