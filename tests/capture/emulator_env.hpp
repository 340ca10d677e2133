#pragma once
// Helpers for tests that run our capture code against the emulated camera. CTest runs these
// binaries as `zerohop-camemu [settings] -- <binary> --gtest_filter=...`; run by hand without the
// emulator, they skip and say how to run them.

#include <dirent.h>
#include <gtest/gtest.h>

#include <cstdlib>
#include <string>
#include <string_view>

namespace zerohop::test {

inline bool underEmulator() {
  const char* preload = std::getenv("LD_PRELOAD");
  return std::getenv("ZEROHOP_CAMEMU_DEVICE") && preload &&
         std::string_view(preload).find("zerohop_camemu") != std::string_view::npos;
}

inline std::string emulatorFaults() {
  const char* f = std::getenv("ZEROHOP_CAMEMU_FAULTS");
  return f ? f : "";
}

inline std::string emulatedDevice() {
  const char* d = std::getenv("ZEROHOP_CAMEMU_DEVICE");
  return d ? d : "/dev/video0";
}

/// Open descriptors of this process (for leak checks across open/close).
inline int openFdCount() {
  int n = 0;
  if (DIR* d = opendir("/proc/self/fd")) {
    while (readdir(d)) ++n;
    closedir(d);
  }
  return n;
}

}  // namespace zerohop::test

#define ZEROHOP_REQUIRE_EMULATOR(fault)                                                                \
  do {                                                                                                 \
    if (!::zerohop::test::underEmulator())                                                             \
      GTEST_SKIP()                                                                                     \
          << "needs the emulated camera: run as zerohop-camemu [options] -- <this test> (ctest does)"; \
    if (std::string_view(fault).size() &&                                                              \
        ::zerohop::test::emulatorFaults().find(fault) == std::string::npos)                            \
      GTEST_SKIP() << "needs the emulator fault '" << (fault) << "' (ctest runs this case with it)";   \
  } while (0)
