// probeGpu on any machine (label unit): a machine without a GPU or driver gets available = false
// with a reason, never a crash; one with a GPU gets its identity. Also the static support table.
#include <gtest/gtest.h>

#include "zerohop/gpu.hpp"
#include "zerohop/gpu_convert.hpp"

namespace zerohop {
namespace {

TEST(GpuProbe, AnswersWithoutCrashing) {
  const GpuInfo info = probeGpu();
  const std::string line = describe(info);
  std::printf("probe: %s\n", line.c_str());
  if (!info.available) {
    EXPECT_FALSE(info.reason.empty());
    EXPECT_NE(line.find(info.reason), std::string::npos);
  } else {
    EXPECT_TRUE(info.reason.empty());
    EXPECT_FALSE(info.name.empty());
    EXPECT_GE(info.ccMajor, 7);
    EXPECT_GE(info.deviceCount, 1);
    EXPECT_GT(info.totalMemoryBytes, 0u);
    EXPECT_GE(info.cudaDriverVersion, 11000);
    EXPECT_NE(line.find(info.name), std::string::npos);
  }
  EXPECT_GT(info.cudaRuntimeVersion, 0);
}

TEST(GpuProbe, MissingDeviceIsAReasonNotACrash) {
  const GpuInfo info = probeGpu(4096);
  EXPECT_FALSE(info.available);
  EXPECT_FALSE(info.reason.empty());
}

TEST(GpuConverterTable, SupportsTheDocumentedPairs) {
  for (auto s : {PixelFormat::kYUYV, PixelFormat::kUYVY, PixelFormat::kNV12, PixelFormat::kI420, PixelFormat::kRGB24,
                 PixelFormat::kBGRx, PixelFormat::kRGBA}) {
    EXPECT_TRUE(GpuConverter::supports(s, PixelFormat::kNV12)) << formatName(s);
    EXPECT_TRUE(GpuConverter::supports(s, PixelFormat::kI420)) << formatName(s);
    EXPECT_TRUE(GpuConverter::supports(s, s)) << formatName(s);
  }
  EXPECT_TRUE(GpuConverter::supports(PixelFormat::kYUYV, PixelFormat::kRGBA));  // gpu_convert_check_test.cpp
  EXPECT_FALSE(GpuConverter::supports(PixelFormat::kMJPEG, PixelFormat::kNV12));
  EXPECT_FALSE(GpuConverter::supports(PixelFormat::kNV12, PixelFormat::kH264));
}

}  // namespace
}  // namespace zerohop
