// The real NVENC probe on a GPU. On a data-centre GPU without a video encoder (A100/H100/H200) the
// driver's libnvidia-encode must refuse the session (driver 580 on an H200 returns
// NV_ENC_ERR_UNSUPPORTED_DEVICE to our API 11.1 headers; the SDK documents NV_ENC_ERR_NO_ENCODE_DEVICE)
// and the probe must say "this GPU has no video encoder". On a GPU
// with an encoder the session must open and list H.264. Skips, saying why, without a CUDA device
// or without the driver's encode library.
#include <gtest/gtest.h>

#include <chrono>
#include <cstdio>
#include <string>

#include "zerohop/error.hpp"
#include "zerohop/nvenc.hpp"

namespace zerohop {
namespace {

bool contains(const std::string& s, const char* part) { return s.find(part) != std::string::npos; }

bool datacentreGpuWithoutEncoder(const std::string& name) {
  for (const char* model : {"A100", "H100", "H200", "H800", "A800", "B200", "GB200"}) {
    if (contains(name, model)) return true;
  }
  return false;
}

TEST(NvencGpu, RealProbeSaysWhatThisGpuCanDo) {
  const auto start = std::chrono::steady_clock::now();
  const NvencAvailability n = probeNvenc(0);
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  std::printf("probeNvenc(0) on '%s': %s\n  status '%s', driver NVENC API '%s', built for '%s', %.3f s\n",
              n.deviceName.c_str(), describe(n).c_str(), n.status.c_str(), n.driverApi.c_str(), n.builtApi.c_str(),
              seconds);
  RecordProperty("nvenc", describe(n));
  RecordProperty("nvenc_status", n.status);
  RecordProperty("gpu", n.deviceName);
  if (n.status == "not built") GTEST_SKIP() << n.reason << " (carry nv-codec-headers in .deps/ffnvcodec)";
  if (n.status == "dlopen" && contains(n.reason, "libnvidia-encode")) GTEST_SKIP() << n.reason;
  if (contains(n.reason, "no CUDA device")) GTEST_SKIP() << n.reason;

  EXPECT_LT(seconds, 5.0);
  EXPECT_FALSE(n.driverApi.empty()) << "the driver's NVENC API version was read before the session";
  if (datacentreGpuWithoutEncoder(n.deviceName)) {
    // Driver 580 on an H200 returns NV_ENC_ERR_UNSUPPORTED_DEVICE to our API 11.1 session; the SDK
    // documents NV_ENC_ERR_NO_ENCODE_DEVICE for "no encoder". Either is "no encoder".
    EXPECT_FALSE(n.available) << n.deviceName << " has no NVENC, yet the probe says it is available";
    EXPECT_TRUE(n.status == "NV_ENC_ERR_NO_ENCODE_DEVICE" || n.status == "NV_ENC_ERR_UNSUPPORTED_DEVICE") << n.status;
    EXPECT_EQ(n.reason, "this GPU has no video encoder (A100/H100/H200): " + n.status);
    // What serve's GPU path does with that answer: auto falls back to x264 saying why; nvenc is an error.
    const GpuEncoderChoice fallback = chooseGpuEncoder("auto", 0);
    EXPECT_FALSE(fallback.nvenc);
    EXPECT_NE(fallback.reason.find("this GPU has no video encoder"), std::string::npos) << fallback.reason;
    try {
      chooseGpuEncoder("nvenc", 0);
      ADD_FAILURE() << "--encoder nvenc accepted on a GPU without NVENC";
    } catch (const Error& e) {
      EXPECT_EQ(std::string(e.what()).rfind("NVENC: this GPU has no video encoder", 0), 0u) << e.what();
    }
    return;
  }
  EXPECT_TRUE(n.available) << "NVENC unavailable on " << n.deviceName << ": " << n.reason;
  EXPECT_TRUE(n.h264);
}

}  // namespace
}  // namespace zerohop
