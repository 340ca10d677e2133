// choosePath and the --gpu option: the decision serve and probe share, on any machine (label unit).
#include <gtest/gtest.h>

#include "zerohop/error.hpp"
#include "gpupath/gpu_path.hpp"

namespace zerohop {
namespace {

TEST(GpuPathChoice, OffIsTheCpuPathWithTheReason) {
  const GpuPathChoice c = choosePath("off", PixelFormat::kYUYV);
  EXPECT_FALSE(c.useGpu);
  EXPECT_NE(c.reason.find("gpu is \"off\""), std::string::npos) << c.reason;
  EXPECT_EQ(c.reason.find("--"), std::string::npos) << "the library's terms, not a CLI flag: " << c.reason;
}

TEST(GpuPathChoice, MalformedOptionsNameTheAcceptedValues) {
  for (const char* bad : {"", "on", "-1", "1a", "gpu0", "256", " 0"}) {
    try {
      choosePath(bad, PixelFormat::kYUYV);
      ADD_FAILURE() << "'" << bad << "' was accepted";
    } catch (const Error& e) {
      EXPECT_EQ(e.code(), Errc::kInvalidArgument) << bad;
      EXPECT_NE(std::string(e.what()).find("auto, off or a CUDA device number"), std::string::npos) << e.what();
    }
  }
}

TEST(GpuPathChoice, H264IsNeverConvertedOnTheGpu) {
  const GpuPathChoice c = choosePath("auto", PixelFormat::kH264);
  EXPECT_FALSE(c.useGpu);
  EXPECT_FALSE(c.reason.empty());
}

TEST(GpuPathChoice, AutoAlwaysAnswersWithAReason) {
  // With a working device: the GPU path for YUYV; without one (or without CUDA): the CPU path.
  // Either way a reason in words, and never an exception.
  const GpuPathChoice c = choosePath("auto", PixelFormat::kYUYV);
  EXPECT_FALSE(c.reason.empty());
  if (c.useGpu) {
    EXPECT_GE(c.device, 0);
    EXPECT_NE(c.reason.find("GPU path"), std::string::npos) << c.reason;
  } else {
    EXPECT_NE(c.reason.find("CPU path"), std::string::npos) << c.reason;
  }
}

}  // namespace
}  // namespace zerohop
