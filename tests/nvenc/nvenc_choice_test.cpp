// --encoder auto|nvenc|x264 for frames in GPU memory (label unit): the fallback to x264 and the error
// for an NVENC that cannot run, from any probe answer, and with this machine's real probe.
#include <gtest/gtest.h>

#include <string>

#include "zerohop/error.hpp"
#include "zerohop/nvenc.hpp"

namespace zerohop {
namespace {

NvencAvailability unavailable(const std::string& reason) {
  NvencAvailability n;
  n.reason = reason;
  n.status = "NV_ENC_ERR_UNSUPPORTED_DEVICE";
  return n;
}

NvencAvailability available() {
  NvencAvailability n;
  n.available = true;
  n.deviceName = "NVIDIA GeForce RTX 4090";
  n.h264 = true;
  return n;
}

TEST(GpuEncoderChoice, AutoUsesNvencWhereASessionOpens) {
  const GpuEncoderChoice c = chooseGpuEncoder("auto", available());
  EXPECT_TRUE(c.nvenc);
  EXPECT_NE(c.reason.find("NVENC encodes the frames from VRAM"), std::string::npos) << c.reason;
  EXPECT_TRUE(chooseGpuEncoder("nvenc", available()).nvenc);
}

TEST(GpuEncoderChoice, AutoFallsBackToX264AndSaysWhy) {
  const std::string why = "this GPU has no video encoder (A100/H100/H200): NV_ENC_ERR_UNSUPPORTED_DEVICE";
  const GpuEncoderChoice c = chooseGpuEncoder("auto", unavailable(why));
  EXPECT_FALSE(c.nvenc);
  EXPECT_NE(c.reason.find("x264"), std::string::npos) << c.reason;
  EXPECT_NE(c.reason.find(why), std::string::npos) << c.reason;
}

TEST(GpuEncoderChoice, NvencWhereItCannotRunIsAnErrorNamingTheCause) {
  const std::string why = "libnvidia-encode.so.1 not found: install the NVIDIA driver's encode library";
  try {
    chooseGpuEncoder("nvenc", unavailable(why));
    ADD_FAILURE() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), Errc::kUnavailable);
    EXPECT_EQ(std::string(e.what()), "NVENC: " + why + "; use the x264 encoder");
  }
}

TEST(GpuEncoderChoice, X264IsTakenAsAskedAndUnknownNamesAreRefused) {
  EXPECT_FALSE(chooseGpuEncoder("x264", available()).nvenc);
  EXPECT_FALSE(chooseGpuEncoder("x264", 0).nvenc);  // no probe needed
  EXPECT_THROW(chooseGpuEncoder("h265", available()), Error);
}

TEST(GpuEncoderChoice, TheRealProbeHereGivesAnAnswerWithAReason) {
  const NvencAvailability probe = probeNvenc(0);
  const GpuEncoderChoice c = chooseGpuEncoder("auto", 0);
  EXPECT_EQ(c.nvenc, probe.available);
  if (!probe.available) {
    EXPECT_NE(c.reason.find(probe.reason), std::string::npos) << c.reason;
  }
}

}  // namespace
}  // namespace zerohop
