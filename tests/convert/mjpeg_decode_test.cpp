// MJPEG decode (libjpeg-turbo + libyuv) through the CPU converter: camera-like JPEGs made with
// libjpeg-turbo from the test camera's picture at q85 decode to within PSNR >= 30 dB of the planes
// they were made from, into I420 and NV12, for 4:2:2 (what UVC cameras send), 4:2:0, 4:4:4 and
// greyscale; broken frames are refused with Error(kInvalidArgument) and the next good frame decodes.
#include <gtest/gtest.h>

#include <random>
#include <string>

#include "jpeg_fixture.hpp"
#include "reference_convert.hpp"
#include "test_image.hpp"
#include "convert/converter.hpp"
#include "zerohop/error.hpp"

namespace zerohop {
namespace {

using testing::SourcePlanes;
using testing::TestImage;

constexpr double kMinPsnrDb = 30.0;

struct PlanePsnr {
  double y, u, v;
};

/// PSNR of a decoded 4:2:0 image against the source's luma and 4:2:0 chroma.
PlanePsnr measure(const SourcePlanes& src, const TestImage& out) {
  const std::uint32_t w2 = src.width / 2, h2 = src.height / 2;
  const auto u = src.u420(), v = src.v420();
  std::vector<std::uint8_t> ou(std::size_t{w2} * h2), ov(ou.size());
  for (std::uint32_t y = 0; y < h2; ++y)
    for (std::uint32_t x = 0; x < w2; ++x) {
      ou[y * w2 + x] = testing::sample420(out, 1, x, y);
      ov[y * w2 + x] = testing::sample420(out, 2, x, y);
    }
  return {testing::psnr(src.y.data(), src.width, out.frame().data[0], out.frame().pitch[0], src.width,
                        src.height),
          testing::psnr(u.data(), w2, ou.data(), w2, w2, h2),
          testing::psnr(v.data(), w2, ov.data(), w2, w2, h2)};
}

struct Case {
  int subsamp;
  PixelFormat dst;
  std::uint32_t width, height;
};

class MjpegGolden : public ::testing::TestWithParam<Case> {};

TEST_P(MjpegGolden, DecodesWithinPsnrOfSource) {
  const Case c = GetParam();
  const SourcePlanes src = testing::cameraPlanes(c.width, c.height);
  const auto jpeg = testing::compressJpeg(src, c.subsamp);
  auto in = TestImage::compressed(PixelFormat::kMJPEG, c.width, c.height, jpeg);
  in.frame().sequence = 77;
  TestImage out(c.dst, c.width, c.height, 5);
  out.poison();
  auto converter = makeCpuConverter();
  converter->convert(in.frame(), out.frame());

  EXPECT_STREQ(converter->name(), "libjpeg-turbo+libyuv");
  EXPECT_EQ(out.frame().color, (ColorDesc{ColorMatrix::kBt601, ColorRange::kFull}));
  EXPECT_EQ(out.frame().sequence, 77u);
  EXPECT_TRUE(out.paddingIs(0xCD));
  const PlanePsnr p = measure(src, out);
  EXPECT_GE(p.y, kMinPsnrDb);
  if (c.subsamp == TJSAMP_GRAY) {
    for (std::uint32_t y = 0; y < c.height / 2; ++y)
      for (std::uint32_t x = 0; x < c.width / 2; ++x) {
        ASSERT_EQ(testing::sample420(out, 1, x, y), 128);
        ASSERT_EQ(testing::sample420(out, 2, x, y), 128);
      }
  } else {
    EXPECT_GE(p.u, kMinPsnrDb);
    EXPECT_GE(p.v, kMinPsnrDb);
  }
  std::cout << "  " << jpeg.size() << " bytes, PSNR Y " << p.y << " U " << p.u << " V " << p.v << " dB\n";
}

std::string subsampName(int s) {
  switch (s) {
    case TJSAMP_422:
      return "422";
    case TJSAMP_420:
      return "420";
    case TJSAMP_444:
      return "444";
    case TJSAMP_GRAY:
      return "gray";
    case TJSAMP_440:
      return "440";
    case TJSAMP_411:
      return "411";
    default:
      return "other";
  }
}

INSTANTIATE_TEST_SUITE_P(
    Subsamplings, MjpegGolden,
    ::testing::Values(
        Case{TJSAMP_422, PixelFormat::kI420, 1280, 720}, Case{TJSAMP_422, PixelFormat::kNV12, 1280, 720},
        Case{TJSAMP_420, PixelFormat::kI420, 1280, 720}, Case{TJSAMP_420, PixelFormat::kNV12, 1280, 720},
        Case{TJSAMP_444, PixelFormat::kI420, 640, 360}, Case{TJSAMP_444, PixelFormat::kNV12, 640, 360},
        Case{TJSAMP_GRAY, PixelFormat::kI420, 640, 360}, Case{TJSAMP_GRAY, PixelFormat::kNV12, 640, 360},
        Case{TJSAMP_440, PixelFormat::kI420, 640, 360}, Case{TJSAMP_411, PixelFormat::kNV12, 640, 360},
        // sizes that are not whole MCUs (16x8 for 4:2:2, 16x16 for 4:2:0)
        Case{TJSAMP_422, PixelFormat::kI420, 646, 358}, Case{TJSAMP_420, PixelFormat::kNV12, 646, 358}),
    [](const ::testing::TestParamInfo<Case>& tp) {
      return subsampName(tp.param.subsamp) + "_to_" + std::string(formatName(tp.param.dst)) + "_" +
             std::to_string(tp.param.width) + "x" + std::to_string(tp.param.height);
    });

class MjpegFaults : public ::testing::Test {
 protected:
  static constexpr std::uint32_t kW = 640, kH = 360;
  void SetUp() override {
    src_ = testing::cameraPlanes(kW, kH);
    good_ = testing::compressJpeg(src_, TJSAMP_422);
    converter_ = makeCpuConverter();
    // The reference decode of the good frame.
    auto in = TestImage::compressed(PixelFormat::kMJPEG, kW, kH, good_);
    converter_->convert(in.frame(), reference_.frame());
  }
  /// `bytes` must be refused with kInvalidArgument and a message containing `needle`; then the
  /// good frame must decode to exactly the reference again.
  void expectRejectedThenRecovers(const std::vector<std::uint8_t>& bytes, const char* needle,
                                  std::uint32_t w = kW, std::uint32_t h = kH) {
    auto bad = TestImage::compressed(PixelFormat::kMJPEG, w, h, bytes);
    TestImage out(PixelFormat::kI420, kW, kH);
    try {
      converter_->convert(bad.frame(), out.frame());
      ADD_FAILURE() << "a broken JPEG decoded without error";
    } catch (const Error& e) {
      EXPECT_EQ(e.code(), Errc::kInvalidArgument) << e.what();
      EXPECT_NE(std::string(e.what()).find(needle), std::string::npos) << e.what();
    }
    auto in = TestImage::compressed(PixelFormat::kMJPEG, kW, kH, good_);
    out.poison();
    converter_->convert(in.frame(), out.frame());
    EXPECT_EQ(out.storage(), reference_.storage()) << "the good frame after a broken one decoded differently";
  }

  SourcePlanes src_;
  std::vector<std::uint8_t> good_;
  std::unique_ptr<FrameConverter> converter_;
  TestImage reference_{PixelFormat::kI420, kW, kH};
};

TEST_F(MjpegFaults, ReferenceDecodeIsGood) {
  EXPECT_GE(measure(src_, reference_).y, kMinPsnrDb);
}

TEST_F(MjpegFaults, EmptyFrame) {
  expectRejectedThenRecovers({}, "empty");
}

TEST_F(MjpegFaults, TruncatedFrame) {
  expectRejectedThenRecovers({good_.begin(), good_.begin() + static_cast<long>(good_.size() / 2)}, "EOI");
}

TEST_F(MjpegFaults, TruncatedScanWithEoiAppended) {
  std::vector<std::uint8_t> cut(good_.begin(), good_.begin() + static_cast<long>(good_.size() / 2));
  cut.push_back(0xFF);
  cut.push_back(0xD9);
  expectRejectedThenRecovers(cut, "tjDecompressToYUVPlanes");
}

TEST_F(MjpegFaults, GarbageBetweenMarkers) {
  std::mt19937 rng(7);
  std::vector<std::uint8_t> junk(20000);
  for (auto& b : junk) b = static_cast<std::uint8_t>(rng());
  junk[0] = 0xFF;
  junk[1] = 0xD8;
  junk[junk.size() - 2] = 0xFF;
  junk.back() = 0xD9;
  expectRejectedThenRecovers(junk, "tjDecompressHeader3");
}

TEST_F(MjpegFaults, NotAJpeg) {
  std::vector<std::uint8_t> yuyv(kW * kH * 2, 0x80);
  expectRejectedThenRecovers(yuyv, "SOI");
}

TEST_F(MjpegFaults, WrongSize) {
  const auto small = testing::compressJpeg(testing::cameraPlanes(320, 180), TJSAMP_422);
  expectRejectedThenRecovers(small, "320x180");
}

TEST_F(MjpegFaults, NonYcbcrJpegIsUnsupported) {
  auto cmyk = TestImage::compressed(PixelFormat::kMJPEG, kW, kH, testing::compressCmykJpeg(kW, kH));
  TestImage out(PixelFormat::kI420, kW, kH);
  try {
    converter_->convert(cmyk.frame(), out.frame());
    ADD_FAILURE() << "a YCCK JPEG decoded as if it were YCbCr";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), Errc::kUnsupported) << e.what();
    EXPECT_NE(std::string(e.what()).find("not YCbCr"), std::string::npos) << e.what();
  }
  auto in = TestImage::compressed(PixelFormat::kMJPEG, kW, kH, good_);
  converter_->convert(in.frame(), out.frame());
  EXPECT_EQ(out.storage(), reference_.storage());
}

TEST_F(MjpegFaults, PayloadLargerThanBuffer) {
  auto in = TestImage::compressed(PixelFormat::kMJPEG, kW, kH, good_);
  in.frame().bytesUsed = in.frame().capacity + 1;
  TestImage out(PixelFormat::kI420, kW, kH);
  try {
    converter_->convert(in.frame(), out.frame());
    ADD_FAILURE() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), Errc::kInvalidArgument) << e.what();
  }
}

TEST_F(MjpegFaults, ZeroPaddingAfterEoiIsAccepted) {
  auto padded = good_;
  padded.resize(padded.size() + 1000, 0x00);  // UVC payloads are often padded
  auto in = TestImage::compressed(PixelFormat::kMJPEG, kW, kH, padded);
  TestImage out(PixelFormat::kI420, kW, kH);
  converter_->convert(in.frame(), out.frame());
  EXPECT_EQ(out.storage(), reference_.storage());
}

TEST_F(MjpegFaults, ExtraneousBytesBeforeAMarkerAreTolerated) {
  // libjpeg warns "Corrupt JPEG data: 3 extraneous bytes before marker" and decodes the picture whole;
  // some UVC cameras do this on every frame, so it must not drop frames.
  auto odd = good_;
  odd.insert(odd.begin() + 2, {0x01, 0x02, 0x03});
  auto in = TestImage::compressed(PixelFormat::kMJPEG, kW, kH, odd);
  TestImage out(PixelFormat::kI420, kW, kH);
  converter_->convert(in.frame(), out.frame());
  EXPECT_EQ(out.storage(), reference_.storage());
}

}  // namespace
}  // namespace zerohop
