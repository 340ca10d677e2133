// Golden tests of the CPU converter's raw paths (libyuv) against per-pixel references
// (reference_convert.hpp). Outputs are poisoned before every run; padding bytes must stay poisoned.
//
// Tolerances (absolute, 8-bit code values):
//   YUV sources (YUYV, UYVY, NV12, I420): luma exact; chroma within 0.5 of the reference (4:2:2 to
//     4:2:0 takes the mean of two rows, which libyuv rounds up; copies are exact).
//   RGB sources (RGB24, BGRx, RGBA): luma within 1 and chroma within 2 of the unrounded BT.601
//     limited-range formula (libyuv uses 8-bit fixed-point coefficients and rounded 2x2 means).
#include <gtest/gtest.h>

#include <string>
#include <tuple>

#include "reference_convert.hpp"
#include "source/pattern_frames.hpp"
#include "test_image.hpp"
#include "convert/converter.hpp"
#include "zerohop/error.hpp"
#include "zerohop/timecode.hpp"

namespace zerohop {
namespace {

using testing::TestImage;

bool isRgb(PixelFormat f) {
  return f == PixelFormat::kRGB24 || f == PixelFormat::kBGRx || f == PixelFormat::kRGBA;
}

struct Geometry {
  std::uint32_t width, height, srcExtraPitch, dstExtraPitch;
};

using Param = std::tuple<PixelFormat, PixelFormat, Geometry>;

class RawConvertGolden : public ::testing::TestWithParam<Param> {};

TEST_P(RawConvertGolden, MatchesReferenceOnRandomInput) {
  const auto [srcFormat, dstFormat, g] = GetParam();
  auto converter = makeCpuConverter();
  for (std::uint32_t seed : {1u, 2u}) {
    TestImage src(srcFormat, g.width, g.height, g.srcExtraPitch);
    src.fillRandom(seed);
    TestImage dst(dstFormat, g.width, g.height, g.dstExtraPitch);
    dst.poison(0xCD);
    converter->convert(src.frame(), dst.frame());

    const auto ref = testing::reference420(src);
    const auto dev = testing::deviation(ref, dst);
    const double tolY = isRgb(srcFormat) ? 1.0 : 0.0;
    const double tolC = isRgb(srcFormat) ? 2.0 : 0.5;
    EXPECT_LE(dev.maxY, tolY) << "luma, seed " << seed;
    EXPECT_LE(dev.maxC, tolC) << "chroma, seed " << seed;
    EXPECT_TRUE(dst.paddingIs(0xCD)) << "converter wrote outside the image rows";
    EXPECT_STREQ(converter->name(), "libyuv");
  }
}

std::string paramName(const ::testing::TestParamInfo<Param>& info) {
  const auto& [s, d, g] = info.param;
  return std::string(formatName(s)) + "_to_" + std::string(formatName(d)) + "_" + std::to_string(g.width) +
         "x" + std::to_string(g.height) + "_pad" + std::to_string(g.srcExtraPitch) + "_" +
         std::to_string(g.dstExtraPitch);
}

INSTANTIATE_TEST_SUITE_P(
    AllPairs, RawConvertGolden,
    ::testing::Combine(::testing::Values(PixelFormat::kYUYV, PixelFormat::kUYVY, PixelFormat::kNV12,
                                         PixelFormat::kI420, PixelFormat::kRGB24, PixelFormat::kBGRx,
                                         PixelFormat::kRGBA),
                       ::testing::Values(PixelFormat::kI420, PixelFormat::kNV12),
                       // tiny, SIMD-tail widths with odd pitches, and a camera size with aligned pitches
                       ::testing::Values(Geometry{2, 2, 0, 0}, Geometry{70, 46, 13, 7},
                                         Geometry{642, 38, 1, 33}, Geometry{640, 360, 0, 0})),
    paramName);

// Camera-like content: the test camera's own picture (texture, noise, moving object, timecode).
class CameraContent : public ::testing::TestWithParam<std::tuple<PixelFormat, PixelFormat>> {};

TEST_P(CameraContent, MatchesReferenceAndKeepsTimecode) {
  const auto [srcFormat, dstFormat] = GetParam();
  constexpr std::uint32_t kW = 1280, kH = 720;
  PatternFrames pattern(srcFormat, kW, kH);
  auto converter = makeCpuConverter();
  for (std::uint64_t index : {0u, 17u}) {
    TestImage src(srcFormat, kW, kH, 64);
    const Timecode tc{1'700'000'000'123ull + index * 33, static_cast<std::uint32_t>(1000 + index)};
    pattern.render(src.frame(), index, tc);
    TestImage dst(dstFormat, kW, kH, 3);
    dst.poison();
    converter->convert(src.frame(), dst.frame());
    const auto dev = testing::deviation(testing::reference420(src), dst);
    EXPECT_EQ(dev.maxY, 0.0);
    EXPECT_LE(dev.maxC, 0.5);
    const auto back = readTimecode(dst.frame());
    ASSERT_TRUE(back.has_value()) << "timecode unreadable after conversion";
    EXPECT_EQ(back->sequence, tc.sequence);
    EXPECT_EQ(back->wallClockMs, tc.wallClockMs & kTimecodeMsMask);
  }
}

INSTANTIATE_TEST_SUITE_P(PackedToPlanar, CameraContent,
                         ::testing::Combine(::testing::Values(PixelFormat::kYUYV, PixelFormat::kUYVY),
                                            ::testing::Values(PixelFormat::kI420, PixelFormat::kNV12)),
                         [](const ::testing::TestParamInfo<std::tuple<PixelFormat, PixelFormat>>& tp) {
                           return std::string(formatName(std::get<0>(tp.param))) + "_to_" +
                                  std::string(formatName(std::get<1>(tp.param)));
                         });

TEST(CpuConverter, CopiesMetadataSetsColourAndMarksConvert) {
  auto converter = makeCpuConverter();
  TestImage src(PixelFormat::kYUYV, 64, 48);
  src.fillRandom(3);
  src.frame().sequence = 4242;
  src.frame().wallClockMs = 1'700'000'000'000;
  src.frame().color = ColorDesc{ColorMatrix::kBt709, ColorRange::kLimited};
  src.frame().times.mark(Stage::kCapture, 1000);
  src.frame().times.mark(Stage::kIngest, 2000);
  TestImage dst(PixelFormat::kI420, 64, 48);
  converter->convert(src.frame(), dst.frame());
  EXPECT_EQ(dst.frame().sequence, 4242u);
  EXPECT_EQ(dst.frame().wallClockMs, 1'700'000'000'000);
  EXPECT_EQ(dst.frame().times.at(Stage::kCapture), 1000);
  EXPECT_EQ(dst.frame().times.at(Stage::kIngest), 2000);
  EXPECT_GT(dst.frame().times.at(Stage::kConvert), 2000);
  EXPECT_EQ(dst.frame().color, (ColorDesc{ColorMatrix::kBt709, ColorRange::kLimited}))
      << "YUV keeps its colour";

  TestImage rgb(PixelFormat::kRGBA, 64, 48);
  rgb.frame().color = ColorDesc{ColorMatrix::kBt709, ColorRange::kFull};
  converter->convert(rgb.frame(), dst.frame());
  EXPECT_EQ(dst.frame().color, (ColorDesc{ColorMatrix::kBt601, ColorRange::kLimited}))
      << "RGB becomes BT.601 limited";
}

// Every fault a caller can cause, with its category.
void expectError(FrameConverter& c, const Frame& src, Frame& dst, Errc code, const char* needle) {
  try {
    c.convert(src, dst);
    ADD_FAILURE() << "no error; expected " << errcName(code);
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), code) << e.what();
    EXPECT_NE(std::string(e.what()).find(needle), std::string::npos) << e.what();
  }
}

TEST(CpuConverter, RejectsWhatItCannotDo) {
  auto c = makeCpuConverter();
  TestImage src(PixelFormat::kYUYV, 64, 48);
  TestImage i420(PixelFormat::kI420, 64, 48);

  TestImage yuyvDst(PixelFormat::kYUYV, 64, 48);
  expectError(*c, src.frame(), yuyvDst.frame(), Errc::kUnsupported, "i420 or nv12");

  TestImage smaller(PixelFormat::kI420, 32, 24);
  expectError(*c, src.frame(), smaller.frame(), Errc::kUnsupported, "scaling");

  Frame device = src.frame();
  device.memory = MemoryKind::kDevice;
  expectError(*c, device, i420.frame(), Errc::kUnsupported, "GPU memory");

  Frame h264 = src.frame();
  h264.format = PixelFormat::kH264;
  expectError(*c, h264, i420.frame(), Errc::kUnsupported, "h264");

  Frame noData = src.frame();
  noData.data[0] = nullptr;
  expectError(*c, noData, i420.frame(), Errc::kInvalidArgument, "no memory");

  Frame shortPitch = src.frame();
  shortPitch.pitch[0] = 64;  // one YUYV row is 128 bytes
  expectError(*c, shortPitch, i420.frame(), Errc::kInvalidArgument, "pitch");

  Frame badDst = i420.frame();
  badDst.data[2] = nullptr;
  expectError(*c, src.frame(), badDst, Errc::kInvalidArgument, "plane 2");

  TestImage odd(PixelFormat::kRGB24, 63, 48);
  Frame oddDst = i420.frame();
  oddDst.width = 63;
  expectError(*c, odd.frame(), oddDst, Errc::kInvalidArgument, "even size");

  // After all that, a good frame still converts.
  src.fillRandom(9);
  EXPECT_NO_THROW(c->convert(src.frame(), i420.frame()));
  EXPECT_EQ(testing::deviation(testing::reference420(src), i420).maxY, 0.0);
}

}  // namespace
}  // namespace zerohop
