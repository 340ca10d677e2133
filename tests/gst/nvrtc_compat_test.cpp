// libzerohop-nvrtc-compat.so (plugins/gst/nvrtc_compat.cpp) compiles what GStreamer 1.22 asks for
// (--gpu-architecture=compute_52) with this machine's real NVRTC, which on CUDA 13 refuses it. No GPU
// needed: NVRTC only compiles. Skips where the machine has no libnvrtc at all.
#include <dlfcn.h>
#include <gtest/gtest.h>
#include <nvrtc.h>

#include <algorithm>
#include <cstdlib>
#include <string>
#include <vector>

#include "beside_program.hpp"

namespace {

// The NVRTC calls through one library handle (the real one or the compatibility one).
struct Nvrtc {
  void* handle = nullptr;
  decltype(&nvrtcCreateProgram) create = nullptr;
  decltype(&nvrtcCompileProgram) compile = nullptr;
  decltype(&nvrtcDestroyProgram) destroy = nullptr;
  decltype(&nvrtcGetPTXSize) ptxSize = nullptr;
  decltype(&nvrtcGetPTX) ptx = nullptr;
  decltype(&nvrtcGetNumSupportedArchs) numArchs = nullptr;
  decltype(&nvrtcGetSupportedArchs) archs = nullptr;

  explicit Nvrtc(const char* name) : handle(dlopen(name, RTLD_NOW | RTLD_LOCAL)) {
    if (!handle) return;
    create = reinterpret_cast<decltype(create)>(dlsym(handle, "nvrtcCreateProgram"));
    compile = reinterpret_cast<decltype(compile)>(dlsym(handle, "nvrtcCompileProgram"));
    destroy = reinterpret_cast<decltype(destroy)>(dlsym(handle, "nvrtcDestroyProgram"));
    ptxSize = reinterpret_cast<decltype(ptxSize)>(dlsym(handle, "nvrtcGetPTXSize"));
    ptx = reinterpret_cast<decltype(ptx)>(dlsym(handle, "nvrtcGetPTX"));
    numArchs = reinterpret_cast<decltype(numArchs)>(dlsym(handle, "nvrtcGetNumSupportedArchs"));
    archs = reinterpret_cast<decltype(archs)>(dlsym(handle, "nvrtcGetSupportedArchs"));
  }
  ~Nvrtc() {
    if (handle) dlclose(handle);
  }
  Nvrtc(const Nvrtc&) = delete;
  Nvrtc& operator=(const Nvrtc&) = delete;

  int lowestArch() const {
    int n = 0;
    if (numArchs(&n) != NVRTC_SUCCESS || n <= 0) return 0;
    std::vector<int> list(static_cast<std::size_t>(n));
    if (archs(list.data()) != NVRTC_SUCCESS) return 0;
    int lowest = list[0];
    for (int a : list) lowest = std::min(lowest, a);
    return lowest;
  }

  // Compiles a one-kernel program: the compile status and, on success, the PTX's `.target` line.
  std::pair<nvrtcResult, std::string> compileTarget(const std::vector<const char*>& options) const {
    nvrtcProgram prog = nullptr;
    if (create(&prog, "extern \"C\" __global__ void zerohop_probe(int* p) { *p = 1; }", "probe.cu", 0,
               nullptr, nullptr) != NVRTC_SUCCESS) {
      return {NVRTC_ERROR_PROGRAM_CREATION_FAILURE, ""};
    }
    const nvrtcResult r = compile(prog, static_cast<int>(options.size()), options.data());
    std::string target;
    std::size_t size = 0;
    if (r == NVRTC_SUCCESS && ptxSize(prog, &size) == NVRTC_SUCCESS) {
      std::string text(size, '\0');
      if (ptx(prog, text.data()) == NVRTC_SUCCESS) {
        const auto at = text.find(".target ");
        if (at != std::string::npos)
          target = text.substr(at + 8, text.find_first_of("\n ,", at + 8) - at - 8);
      }
    }
    destroy(&prog);
    return {r, target};
  }
};

class NvrtcCompat : public ::testing::Test {
 protected:
  void SetUp() override {
    setenv("ZEROHOP_NVRTC_LIBNAME", ZEROHOP_REAL_NVRTC, 1);  // read at the library's first call, below
    if (!real_.handle)
      GTEST_SKIP() << "no " << ZEROHOP_REAL_NVRTC << " on this machine (the CUDA toolkit's NVRTC)";
    ASSERT_NE(compat_.handle, nullptr)
        << zerohop::testing::besideProgram(ZEROHOP_NVRTC_COMPAT) << ": " << dlerror();
    ASSERT_TRUE(compat_.create && compat_.compile && compat_.destroy && compat_.ptxSize && compat_.ptx)
        << "the compatibility library lacks an NVRTC call GStreamer loads";
    lowest_ = real_.lowestArch();
    ASSERT_GT(lowest_, 0) << "the real NVRTC lists no architectures";
  }
  Nvrtc real_{ZEROHOP_REAL_NVRTC};
  Nvrtc compat_{zerohop::testing::besideProgram(ZEROHOP_NVRTC_COMPAT).c_str()};
  int lowest_ = 0;
};

TEST_F(NvrtcCompat, CompilesWhatGStreamer122AsksForAtTheLowestArchitectureTheRealNvrtcTargets) {
  const auto [r, target] = compat_.compileTarget({"--gpu-architecture=compute_52"});
  ASSERT_EQ(r, NVRTC_SUCCESS);
  EXPECT_EQ(target, "sm_" + std::to_string(std::max(lowest_, 52)));
  // Where the real NVRTC itself refuses compute_52 (CUDA 13), that is what the library is for.
  if (lowest_ > 52) {
    EXPECT_NE(real_.compileTarget({"--gpu-architecture=compute_52"}).first, NVRTC_SUCCESS);
  }
}

TEST_F(NvrtcCompat, RaisesTheTwoOptionSpellingsToo) {
  const auto [r, target] = compat_.compileTarget({"-arch", "compute_50", "-default-device"});
  ASSERT_EQ(r, NVRTC_SUCCESS);
  EXPECT_EQ(target, "sm_" + std::to_string(std::max(lowest_, 50)));
  const auto [r2, target2] = compat_.compileTarget({"-arch=compute_35"});
  ASSERT_EQ(r2, NVRTC_SUCCESS);
  EXPECT_EQ(target2, "sm_" + std::to_string(std::max(lowest_, 35)));
}

TEST_F(NvrtcCompat, LeavesAnArchitectureTheRealNvrtcTargetsAsItIs) {
  const auto [r, target] = compat_.compileTarget({"--gpu-architecture=compute_90"});
  ASSERT_EQ(r, NVRTC_SUCCESS);
  EXPECT_EQ(target, "sm_90");
  EXPECT_EQ(real_.compileTarget({"--gpu-architecture=compute_90"}).second, "sm_90");
}

TEST_F(NvrtcCompat, PassesCompileErrorsThrough) {
  EXPECT_EQ(compat_.compileTarget({"--gpu-architecture=compute_52", "--no-such-option"}).first,
            NVRTC_ERROR_INVALID_OPTION);
}

}  // namespace
