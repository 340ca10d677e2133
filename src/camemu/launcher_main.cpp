// zerohop-camemu: runs a command with the emulated V4L2 camera visible at a device path.
//   zerohop-camemu [--device /dev/video0] [--format mjpeg|yuyv|uyvy|nv12|h264] [--size WxH] [--fps N]
//                  [--no-expbuf] [--no-keyframe-control] [--h264-headers=idr|once] [--verbose]
//                  [--FAULT=VALUE ...] -- COMMAND [ARGS...]
// It validates the settings, exports them as ZEROHOP_CAMEMU_* variables, prepends the shim to
// LD_PRELOAD and execs COMMAND (so the exit status is COMMAND's).

#include <unistd.h>

#include <climits>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <string_view>
#include <vector>

#include "camemu/camemu_config.hpp"
#include "zerohop/error.hpp"

namespace {

using zerohop::camemu::EmuConfig;

constexpr const char* kUsage =
    "usage: zerohop-camemu [--device /dev/video0] [--format mjpeg|yuyv|uyvy|nv12|h264] [--size WxH] [--fps "
    "N]\n"
    "                      [--no-expbuf] [--no-keyframe-control] [--h264-headers=idr|once] [--verbose]\n"
    "                      [faults] -- COMMAND [ARGS...]\n"
    "  --no-keyframe-control  an H.264 camera without V4L2_CID_MPEG_VIDEO_FORCE_KEY_FRAME\n"
    "  --h264-headers=once    SPS/PPS only before the first IDR (default idr: before every IDR)\n"
    "faults (frames count from 1):\n"
    "  --error-every=N      every Nth buffer carries V4L2_BUF_FLAG_ERROR\n"
    "  --corrupt-every=N    every Nth MJPEG frame lacks its EOI marker\n"
    "  --truncate-every=N   every Nth MJPEG frame is cut to a third\n"
    "  --empty-every=N      every Nth buffer has bytesused 0\n"
    "  --drop-every=N       every Nth frame is lost (sequence gap)\n"
    "  --slow-every=N:MS    every Nth frame is MS late\n"
    "  --stall-at=N:MS      no frames for MS before frame N (once)\n"
    "  --unplug-at=N[:MS]   the camera is unplugged before frame N (ENODEV), back after MS\n"
    "The settings travel as ZEROHOP_CAMEMU_* environment variables (see docs/camemu.md).\n";

std::string shimPath() {
  if (const char* p = std::getenv("ZEROHOP_CAMEMU_LIB")) return p;
  char self[PATH_MAX];
  const ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
  if (n <= 0) return "libzerohop_camemu.so";
  self[n] = '\0';
  std::string dir(self);
  dir.erase(dir.rfind('/') + 1);
  // The build tree keeps the shim next to the launcher; an installed one is under the library dir.
  const std::string beside = dir + "libzerohop_camemu.so";
  if (access(beside.c_str(), R_OK) == 0) return beside;
#ifdef ZEROHOP_CAMEMU_SHIM_FROM_BINDIR
  return dir + ZEROHOP_CAMEMU_SHIM_FROM_BINDIR "/libzerohop_camemu.so";
#else
  return beside;
#endif
}

}  // namespace

int main(int argc, char** argv) {
  EmuConfig config;
  int i = 1;
  try {
    for (; i < argc; ++i) {
      std::string_view arg = argv[i];
      if (arg == "--") {
        ++i;
        break;
      }
      if (arg == "-h" || arg == "--help") {
        std::fputs(kUsage, stdout);
        return 0;
      }
      if (arg == "--verbose") {
        config.verbose = true;
        continue;
      }
      if (arg == "--no-expbuf") {
        config.expbuf = false;
        continue;
      }
      if (arg == "--no-keyframe-control") {
        config.keyframeControl = false;
        continue;
      }
      if (arg.substr(0, 2) != "--")
        throw zerohop::Error(zerohop::Errc::kInvalidArgument, "expected -- before the command");
      arg.remove_prefix(2);
      std::string_view key = arg, value;
      if (auto eq = arg.find('='); eq != std::string_view::npos) {
        key = arg.substr(0, eq);
        value = arg.substr(eq + 1);
      } else {
        if (i + 1 >= argc)
          throw zerohop::Error(zerohop::Errc::kInvalidArgument, "--" + std::string(key) + " needs a value");
        value = argv[++i];
      }
      zerohop::camemu::applySetting(config, key, value);
    }
  } catch (const zerohop::Error& e) {
    std::fprintf(stderr, "zerohop-camemu: %s\n%s", e.what(), kUsage);
    return 2;
  }
  if (i >= argc) {
    std::fprintf(stderr, "zerohop-camemu: no command given\n%s", kUsage);
    return 2;
  }
  using namespace zerohop::camemu;
  setenv(kEnvDevice, config.devicePath.c_str(), 1);
  setenv(kEnvFormat, std::string(zerohop::formatName(config.format)).c_str(), 1);
  setenv(kEnvSize, (std::to_string(config.width) + "x" + std::to_string(config.height)).c_str(), 1);
  setenv(kEnvFps, std::to_string(config.fps).c_str(), 1);
  setenv(kEnvFaults, faultsToString(config.faults).c_str(), 1);
  setenv(kEnvExpbuf, config.expbuf ? "1" : "0", 1);
  setenv(kEnvVerbose, config.verbose ? "1" : "0", 1);
  setenv(kEnvKeyframeControl, config.keyframeControl ? "1" : "0", 1);
  setenv(kEnvH264Headers, config.h264HeadersEveryIdr ? "idr" : "once", 1);
  std::string preload = shimPath();
  if (const char* old = std::getenv("LD_PRELOAD"); old && *old) preload += std::string(":") + old;
  setenv("LD_PRELOAD", preload.c_str(), 1);
  execvp(argv[i], argv + i);
  std::fprintf(stderr, "zerohop-camemu: cannot run %s: %s\n", argv[i], std::strerror(errno));
  return 127;
}
