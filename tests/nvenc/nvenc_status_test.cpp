// The NVENC reason mapping (dlopen error / NVENCSTATUS / CUDA answer -> words), and the probe's
// answer on whatever machine runs the test: it never throws and answers within seconds.
#include <gtest/gtest.h>
#include <nvEncodeAPI.h>

#include <chrono>

#include "encode/nvenc_status.hpp"
#include "zerohop/nvenc.hpp"

namespace zerohop::encode {
namespace {

constexpr std::uint32_t kApi111 = (11u << 4) | 1u;

TEST(NvencStatus, NamesEveryStatusAndNumbersUnknownOnes) {
  EXPECT_EQ(nvencStatusName(NV_ENC_SUCCESS), "NV_ENC_SUCCESS");
  EXPECT_EQ(nvencStatusName(NV_ENC_ERR_NO_ENCODE_DEVICE), "NV_ENC_ERR_NO_ENCODE_DEVICE");
  EXPECT_EQ(nvencStatusName(NV_ENC_ERR_INCOMPATIBLE_CLIENT_KEY), "NV_ENC_ERR_INCOMPATIBLE_CLIENT_KEY");
  EXPECT_EQ(nvencStatusName(NV_ENC_ERR_RESOURCE_NOT_MAPPED), "NV_ENC_ERR_RESOURCE_NOT_MAPPED");
  EXPECT_EQ(nvencStatusName(4242), "NVENCSTATUS 4242");
}

TEST(NvencStatus, ApiVersionIsMajorNibblesDotMinor) {
  EXPECT_EQ(nvencApiVersionText(kApi111), "11.1");
  EXPECT_EQ(nvencApiVersionText((13u << 4) | 0u), "13.0");
}

TEST(NvencStatus, MissingLibraryNamesItAndTheFix) {
  const std::string r =
      nvencLibraryFailureReason("libnvidia-encode.so.1: cannot open shared object file: No such file or directory");
  EXPECT_EQ(r.rfind("libnvidia-encode.so.1 not found: install the NVIDIA driver's encode library "
                    "(e.g. libnvidia-encode-<ver>)",
                    0),
            0u)
      << r;
  EXPECT_NE(r.find("No such file or directory"), std::string::npos) << r;
  const std::string broken = nvencLibraryFailureReason("libnvidia-encode.so.1: wrong ELF class: ELFCLASS32");
  EXPECT_EQ(broken, "libnvidia-encode.so.1 could not be loaded: libnvidia-encode.so.1: wrong ELF class: ELFCLASS32");
}

TEST(NvencStatus, NoEncodeDeviceIsTheDatacentreGpu) {
  EXPECT_EQ(nvencFailureReason("nvEncOpenEncodeSessionEx", NV_ENC_ERR_NO_ENCODE_DEVICE, kApi111),
            "this GPU has no video encoder (A100/H100/H200): NV_ENC_ERR_NO_ENCODE_DEVICE");
  // Driver 580.159.04 (NVENC API 13.0) on an H200 returns this to a session opened with the API 11.1
  // headers (docs/nvenc.md).
  EXPECT_EQ(nvencFailureReason("nvEncOpenEncodeSessionEx", NV_ENC_ERR_UNSUPPORTED_DEVICE, kApi111),
            "this GPU has no video encoder (A100/H100/H200): NV_ENC_ERR_UNSUPPORTED_DEVICE");
}

TEST(NvencStatus, OutOfMemoryAndClientKeyAreTheGeForceSessionLimit) {
  for (int st : {NV_ENC_ERR_OUT_OF_MEMORY, NV_ENC_ERR_INCOMPATIBLE_CLIENT_KEY}) {
    const std::string r = nvencFailureReason("nvEncOpenEncodeSessionEx", st, kApi111);
    EXPECT_EQ(r.rfind("session limit reached on this GeForce (" + nvencStatusName(st), 0), 0u) << r;
    EXPECT_NE(r.find("docs/nvenc.md"), std::string::npos) << r;
  }
}

TEST(NvencStatus, OldDriverSaysWhichApi) {
  EXPECT_EQ(nvencDriverTooOldReason(kApi111, (10u << 4)),
            "driver too old for NVENC API 11.1 (it offers 10.0): update the NVIDIA driver (R470 or newer)");
  EXPECT_EQ(nvencFailureReason("NvEncodeAPICreateInstance", NV_ENC_ERR_INVALID_VERSION, kApi111),
            "driver too old for NVENC API 11.1 (NV_ENC_ERR_INVALID_VERSION): update the NVIDIA driver (R470 or newer)");
}

TEST(NvencStatus, AnythingElseIsTheCallAndTheStatusName) {
  EXPECT_EQ(nvencFailureReason("nvEncOpenEncodeSessionEx", NV_ENC_ERR_INVALID_DEVICE, kApi111),
            "nvEncOpenEncodeSessionEx failed: NV_ENC_ERR_INVALID_DEVICE");
  EXPECT_EQ(nvencFailureReason("nvEncGetEncodeGUIDs", 4242, kApi111), "nvEncGetEncodeGUIDs failed: NVENCSTATUS 4242");
}

TEST(NvencStatus, NoCudaDevice) {
  EXPECT_EQ(noCudaDeviceReason(), "no CUDA device");
  EXPECT_EQ(noCudaDeviceReason("cuInit: CUDA_ERROR_NO_DEVICE"), "no CUDA device (cuInit: CUDA_ERROR_NO_DEVICE)");
}

TEST(NvencProbe, AnswersWithinSecondsAndNeverThrows) {
  const auto start = std::chrono::steady_clock::now();
  const NvencAvailability n = probeNvenc();
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  std::printf("probeNvenc(): %s [status '%s', %.3f s]\n", describe(n).c_str(), n.status.c_str(), seconds);
  EXPECT_LT(seconds, 5.0);
  EXPECT_EQ(n.builtApi, "11.1");
  if (n.available) {
    EXPECT_TRUE(n.h264);
    EXPECT_TRUE(n.reason.empty());
  } else {
    EXPECT_FALSE(n.reason.empty());
    EXPECT_FALSE(n.status.empty());
    EXPECT_EQ(describe(n), "unavailable: " + n.reason);
  }
}

}  // namespace
}  // namespace zerohop::encode
