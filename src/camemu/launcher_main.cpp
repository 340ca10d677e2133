// zerohop-camemu: runs a command with emulated V4L2 cameras visible at device paths.
//   zerohop-camemu [--device /dev/video0] [--format mjpeg|yuyv|uyvy|nv12|h264] [--size WxH] [--fps N]
//                  [--no-expbuf] [--no-keyframe-control] [--h264-headers=idr|once] [--verbose]
//                  [--FAULT=VALUE ...] [--camera SETTINGS ... | --cameras N] -- COMMAND [ARGS...]
// Without --camera/--cameras: one camera, as set by the other options. With them: camera i is
// /dev/video<i>, starts from the other options and applies its own group ("format=mjpeg,fps=15").
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
    "                      [faults] [--camera SETTINGS ... | --cameras N] -- COMMAND [ARGS...]\n"
    "  --camera SETTINGS      one more camera, /dev/video<i> for the i-th (from 0), e.g.\n"
    "                         --camera format=mjpeg,size=1280x720,fps=15,unplug-at=30:500\n"
    "                         (keys: device format size fps expbuf keyframe-control h264-headers and the\n"
    "                         faults below without --; the other options are every camera's defaults)\n"
    "  --cameras N            N cameras /dev/video0..N-1 with the other options' settings\n"
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
  std::vector<std::string> groups;  // one per --camera
  std::size_t cameraCount = 0;      // --cameras N
  bool deviceGiven = false;
  std::vector<EmuConfig> cameras;
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
      if (key == "camera") {
        groups.emplace_back(value);
        continue;
      }
      if (key == "cameras") {
        const std::string n(value);
        char* end = nullptr;
        const unsigned long count = std::strtoul(n.c_str(), &end, 10);
        if (n.empty() || *end || count < 1 || count > zerohop::camemu::kMaxCameras)
          throw zerohop::Error(
              zerohop::Errc::kInvalidArgument,
              "--cameras needs a count within 1.." + std::to_string(zerohop::camemu::kMaxCameras));
        cameraCount = count;
        continue;
      }
      deviceGiven = deviceGiven || key == "device";
      zerohop::camemu::applySetting(config, key, value);
    }
    if (!groups.empty() && cameraCount)
      throw zerohop::Error(zerohop::Errc::kInvalidArgument, "give --camera groups or --cameras N, not both");
    if ((!groups.empty() || cameraCount) && deviceGiven)
      throw zerohop::Error(zerohop::Errc::kInvalidArgument,
                           "--device names the one camera; with several, give device= in a --camera group");
    if (cameraCount) groups.assign(cameraCount, std::string());
    if (!groups.empty()) cameras = zerohop::camemu::camerasFromGroups(config, groups);
  } catch (const zerohop::Error& e) {
    const std::string_view why = e.what();  // the settings' errors already name zerohop-camemu
    std::fprintf(stderr, "%s%s\n%s", why.starts_with("zerohop-camemu: ") ? "" : "zerohop-camemu: ", e.what(),
                 kUsage);
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
  if (cameras.empty()) {
    unsetenv(kEnvCameras);  // one camera, even under an outer zerohop-camemu with several
  } else {
    // Every camera's settings in full, so the shim needs nothing else; the one-camera variables name
    // camera 0 for tools that read them.
    std::string list;
    for (const EmuConfig& c : cameras) list += (list.empty() ? "" : ";") + settingsToString(c);
    setenv(kEnvCameras, list.c_str(), 1);
    setenv(kEnvDevice, cameras.front().devicePath.c_str(), 1);
  }
  std::string preload = shimPath();
  if (const char* old = std::getenv("LD_PRELOAD"); old && *old) preload += std::string(":") + old;
  setenv("LD_PRELOAD", preload.c_str(), 1);
  execvp(argv[i], argv + i);
  std::fprintf(stderr, "zerohop-camemu: cannot run %s: %s\n", argv[i], std::strerror(errno));
  return 127;
}
