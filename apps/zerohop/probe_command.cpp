// zerohop probe: what this machine offers (cameras, GPU, encoders) and which data path serve
// would choose, with the reason.
#include <cstdio>
#include <memory>
#include <string>

#include "commands.hpp"
#include "zerohop/capture.hpp"
#include "zerohop/error.hpp"
#include "zerohop/nvenc.hpp"
#include "zerohop/share.hpp"
#include "zerohop/version.hpp"
#ifdef ZEROHOP_CLI_HAS_GPU
#include "zerohop/gpu.hpp"
#endif

namespace zerohop::cli {
namespace {

struct ProbeOptions {
  int gpu = -1;  // -1: the first usable device
};

int runProbe(const ProbeOptions& o) {
  std::printf("zerohop %s\n\n", kVersion);
  std::printf("sources\n");
  std::printf("  test        built-in test camera (test:WxH@FPS), YUYV/UYVY with a pixel timecode\n");
  std::vector<CaptureDevice> cameras;
  try {
    cameras = probeCaptureDevices();
  } catch (const Error& e) {
    std::printf("  v4l2        could not enumerate /dev/video*: %s\n", e.what());
  }
  if (cameras.empty()) {
    std::printf("  v4l2        no V4L2 capture device found (/dev/video*); zerohop-camemu emulates one\n");
  }
  for (const auto& cam : cameras) std::printf("%s\n", describeCaptureDevice(cam).c_str());
  std::printf("\n");

  std::printf("gpu\n");
  std::string path = "CPU";
  std::string reason;
#ifdef ZEROHOP_CLI_HAS_GPU
  const GpuInfo gpu = probeGpu(o.gpu);
  std::printf("  %s\n", describe(gpu).c_str());
  if (gpu.available) {
    // Cross-process sharing of device frames pays a GPU context switch per hand-off without MPS.
    std::printf("  sharing: %s\n", mpsHandoffNote(detectMps()).c_str());
  }
  if (gpu.available) {
    reason = "a CUDA device works, but serve's GPU data path is not wired in yet (kernels and benchmarks exist: "
             "docs/gpu.md), so serve uses the CPU path";
  } else {
    reason = "no usable CUDA device (" + gpu.reason + ")";
  }
#else
  std::printf("  this build has no CUDA targets (nvcc was not found at build time)\n");
  reason = "built without CUDA";
#endif
  std::printf("\nencoders\n");
  std::printf("  x264        libavcodec libx264: available\n");
  // The same answer makeEncoder and `serve --encoder auto|nvenc` act on.
  const NvencAvailability nvenc = probeNvenc(o.gpu);
  std::printf("  nvenc       %s\n", describe(nvenc).c_str());
  if (nvenc.available) {
    std::printf("              (serve does not feed NVENC yet: its frames are host I420; it uses x264)\n");
  }
  std::printf("\npath: %s (libyuv conversion, x264 encoding)\n", path.c_str());
  std::printf("why:  %s\n", reason.c_str());
  return 0;
}

}  // namespace

Runner addProbeCommand(CLI::App& app) {
  auto o = std::make_shared<ProbeOptions>();
  auto* cmd = app.add_subcommand("probe", "Show the cameras, GPU, encoders and the data path serve would choose, and why");
  cmd->add_option("--gpu", o->gpu, "CUDA device to probe (default: the first usable one)");
  return [o] { return runProbe(*o); };
}

}  // namespace zerohop::cli
