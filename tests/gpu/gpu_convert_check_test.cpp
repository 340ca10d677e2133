// GpuConverter::validate (label unit, no GPU needed: it makes no CUDA call): the requests convert()
// refuses, with the reason in the message, and the crop / scale requests it accepts.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "zerohop/error.hpp"
#include "zerohop/gpu_convert.hpp"

namespace zerohop {
namespace {

// A frame description over host bytes that validate() never dereferences (dst claims kDevice).
Frame frameOf(PixelFormat format, std::uint32_t w, std::uint32_t h, MemoryKind memory,
              std::vector<std::uint8_t>& bytes) {
  const ImageLayout layout = computeLayout(format, w, h, 1);
  bytes.assign(layout.totalBytes, 0);
  Frame f;
  f.format = format;
  f.width = w;
  f.height = h;
  bindLayout(f, layout, bytes.data(), memory);
  return f;
}

ConvertOptions cropOf(std::uint32_t x, std::uint32_t y, std::uint32_t w, std::uint32_t h) {
  ConvertOptions o;
  o.crop = PixelRect{x, y, w, h};
  return o;
}

void expectRefused(const Frame& src, const Frame& dst, const ConvertOptions& options,
                   const std::string& needle) {
  try {
    GpuConverter::validate(src, dst, options);
    ADD_FAILURE() << "accepted; expected an error mentioning '" << needle << "'";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), Errc::kInvalidArgument) << e.what();
    EXPECT_NE(std::string(e.what()).find(needle), std::string::npos) << e.what();
  }
}

TEST(GpuConverterTable, ScalingAndRgbaPairs) {
  for (auto s : {PixelFormat::kYUYV, PixelFormat::kUYVY, PixelFormat::kNV12, PixelFormat::kI420,
                 PixelFormat::kRGB24, PixelFormat::kBGRx, PixelFormat::kRGBA}) {
    EXPECT_TRUE(GpuConverter::supports(s, PixelFormat::kRGBA)) << formatName(s);
    for (auto d : {PixelFormat::kNV12, PixelFormat::kI420, PixelFormat::kRGBA})
      EXPECT_TRUE(GpuConverter::supportsScaling(s, d)) << formatName(s) << " -> " << formatName(d);
  }
  EXPECT_FALSE(GpuConverter::supportsScaling(PixelFormat::kYUYV, PixelFormat::kYUYV));
  EXPECT_FALSE(GpuConverter::supportsScaling(PixelFormat::kRGB24, PixelFormat::kRGB24));
  EXPECT_FALSE(GpuConverter::supportsScaling(PixelFormat::kMJPEG, PixelFormat::kRGBA));
  EXPECT_FALSE(GpuConverter::supports(PixelFormat::kNV12, PixelFormat::kYUYV));
}

TEST(GpuConverterTable, ValidateRefusesBadCropsAndSizes) {
  std::vector<std::uint8_t> a, b, c, d, e;
  const Frame nv12 = frameOf(PixelFormat::kNV12, 1920, 1080, MemoryKind::kPinned, a);
  const Frame yuyv = frameOf(PixelFormat::kYUYV, 1920, 1080, MemoryKind::kPinned, b);
  Frame dst720 = frameOf(PixelFormat::kNV12, 1280, 720, MemoryKind::kDevice, c);
  const Frame rgbaOdd = frameOf(PixelFormat::kRGBA, 641, 361, MemoryKind::kDevice, d);
  const Frame yuyvDst = frameOf(PixelFormat::kYUYV, 640, 360, MemoryKind::kDevice, e);

  // Accepted: edge crops, odd RGBA destinations, odd y / height crops of 4:2:2.
  EXPECT_NO_THROW(GpuConverter::validate(nv12, dst720, cropOf(1280, 720, 640, 360)));
  EXPECT_NO_THROW(GpuConverter::validate(nv12, dst720, {}));
  EXPECT_NO_THROW(GpuConverter::validate(nv12, rgbaOdd, cropOf(0, 0, 960, 540)));
  EXPECT_NO_THROW(GpuConverter::validate(yuyv, dst720, cropOf(2, 1, 1916, 1079)));

  expectRefused(nv12, dst720, cropOf(1, 0, 640, 360), "odd crop");
  expectRefused(nv12, dst720, cropOf(0, 1, 640, 360), "odd crop");
  expectRefused(nv12, dst720, cropOf(0, 0, 640, 361), "odd crop");
  expectRefused(yuyv, dst720, cropOf(3, 0, 640, 360), "odd crop");
  expectRefused(yuyv, dst720, cropOf(0, 0, 641, 360), "odd crop");
  expectRefused(nv12, dst720, cropOf(1282, 720, 640, 360), "outside");
  expectRefused(nv12, dst720, cropOf(0, 722, 640, 360), "outside");
  expectRefused(nv12, dst720, cropOf(0xFFFFFFFEu, 0, 4, 2), "outside");  // x + width overflows 32 bits
  expectRefused(nv12, dst720, cropOf(0, 0, 0, 360), "zero size");
  expectRefused(nv12, dst720, cropOf(0, 0, 640, 0), "zero size");
  Frame empty = dst720;
  empty.width = 0;
  expectRefused(nv12, empty, {}, "zero size");
  expectRefused(yuyv, yuyvDst, {}, "cannot scale");
  Frame odd = dst720;
  odd.width = 641;
  expectRefused(nv12, odd, {}, "even");
  Frame host = dst720;
  host.memory = MemoryKind::kHost;
  expectRefused(nv12, host, {}, "device memory");
  Frame noPlane = dst720;
  noPlane.data[1] = nullptr;
  expectRefused(nv12, noPlane, {}, "destination plane 1");
}

}  // namespace
}  // namespace zerohop
