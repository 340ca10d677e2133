// zerohop probe: what this machine offers (cameras, GPU, encoders) and which data path serve
// would choose, with the reason.
#include <cstdio>
#include <memory>
#include <string>
#include <utility>

#include "audio/alsa_devices.hpp"
#include "camera_options.hpp"
#include "commands.hpp"
#include "gpupath/gpu_path.hpp"
#include "gpupath/gpu_placement.hpp"
#include "pipeline/camera_loads.hpp"
#include "rtsp/rtsp_source.hpp"
#include "zerohop/capture.hpp"
#include "zerohop/error.hpp"
#include "zerohop/nvenc.hpp"
#include "zerohop/share.hpp"
#include "zerohop/version.hpp"
#ifdef ZEROHOP_CLI_HAS_GPU
#include "zerohop/gpu.hpp"
#include "zerohop/gpu_decode.hpp"
#include "zerohop/gpu_jpeg.hpp"
#endif

namespace zerohop::cli {
namespace {

struct ProbeOptions {
  int gpu = -1;  // -1: the first usable device
  std::vector<std::string> cameras;  // --camera NAME=SOURCE
  std::string configPath;            // --config, for its [[camera]] tables
  std::string rtspCamera;            // rtsp://...: only what that camera offers
};

// serve's cameras (--camera, [[camera]] of --config), checked as serve checks them.
std::vector<CameraConfig> configuredCameras(const ProbeOptions& o) {
  std::vector<CameraConfig> cams;
  CameraDefaults defaults;
  if (o.gpu >= 0) defaults.gpu = std::to_string(o.gpu);
  if (!o.configPath.empty()) {
    for (const auto& t : readCameraTables(o.configPath)) cams.push_back(cameraFromTable(t, defaults, o.configPath));
  }
  for (const auto& a : o.cameras) cams.push_back(parseCameraArgument(a, defaults));
  if (!cams.empty()) checkCameras(cams);
  return cams;
}

// The GPUs, each pair's link, and the cameras each would take (the placement serve makes).
void printGpus(const std::vector<CameraConfig>& cams) {
  const GpuTopology topology = probeGpuTopology();
  std::vector<CameraPlacement> placement;
  std::string refused;
  try {
    placement = placeCameras(cameraLoads(cams), usableGpuCount());
  } catch (const Error& e) {
    refused = e.what();
  }
  std::printf("\n%s", renderGpuTopology(topology, placement).c_str());
  if (!refused.empty()) std::printf("  refused:   %s\n", refused.c_str());
}

// For each camera, its source and the path its format takes with its own --gpu setting (the same
// choosePath serve calls once the camera is open).
void printConfiguredCameras(const std::vector<CameraConfig>& cams) {
  if (cams.empty()) return;
  std::printf("\ncameras (as serve would run them)\n");
  for (const auto& c : cams) {
    PixelFormat format = c.source.format;
    if (format == PixelFormat::kUnknown && c.source.kind == "test") format = PixelFormat::kYUYV;
    std::string line;
    if (c.source.kind == "share") {
      line = "frames of the share's publisher: the path follows their format and memory";
    } else if (format == PixelFormat::kUnknown) {
      line = "the camera's own format (add ?format= to see its path; 'path' below has each)";
    } else {
      try {
        line = choosePath(c.gpu, format).reason;
      } catch (const Error& e) {
        line = std::string("refused: ") + e.what();
      }
    }
    std::printf("  %-11s %s\n              %s%s\n", c.name.c_str(), toString(c.source).c_str(), line.c_str(),
                c.shareName.empty() ? "" : ("; shared as '" + c.shareName + "'").c_str());
  }
}

// ALSA capture devices, each with its USB path: a camera's microphone shows the camera's bus_info.
void printAudioCapture() {
  std::printf("\naudio capture\n");
  std::vector<audio::AudioCaptureDevice> mics;
  try {
    mics = audio::probeAudioCaptureDevices();
  } catch (const Error& e) {
    std::printf("  alsa        could not enumerate the sound cards: %s\n", e.what());
    return;
  }
  if (mics.empty()) {
    std::printf("  alsa        no capture devices (no sound card with a capture PCM; /dev/snd)\n");
    return;
  }
  for (const auto& m : mics) std::printf("%s\n", audio::describe(m).c_str());
}

// An IP camera: its streams, its video's codec, size and rate, and what serve does with it.
int runRtspProbe(const std::string& url) {
  const SourceSpec spec = parseSourceSpec(url);
  if (spec.kind != "rtsp") throw Error(Errc::kInvalidArgument, "zerohop probe takes an rtsp:// camera address, e.g. rtsp://192.168.1.20/stream1");
  const RtspCameraInfo camera = probeRtspCamera(spec);
  std::printf("%s\n", toString(spec).c_str());
  std::printf("  offers      %s\n", camera.offered.c_str());
  const bool h264 = camera.codec == "H.264";
  std::printf("  video       %s %ux%u @%g fps (%s)\n", h264 ? "h264" : "h265", camera.video.width, camera.video.height,
              camera.video.fps,
              camera.played ? "from its first IDR: its SDP states no size or rate, so the probe played the "
                                              "stream up to one keyframe"
                            : "as its SDP's parameter sets state: nothing was played");
  if (h264) {
    std::printf("  serve       passes its H.264 through to WebRTC viewers (no decode, no encode); its sound with "
                "--audio rtsp\n");
  } else {
    std::printf("  serve       decodes its H.265 on the CPU (with ?format=nv12 by NVDEC into VRAM) and encodes H.264 "
                "for WebRTC viewers (they take no H.265 as it is); its sound with --audio rtsp\n");
  }
  return 0;
}

int runProbe(const ProbeOptions& o) {
  if (!o.rtspCamera.empty()) return runRtspProbe(o.rtspCamera);
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
  printAudioCapture();
  std::printf("\n");

  std::printf("gpu\n");
#ifdef ZEROHOP_CLI_HAS_GPU
  const GpuInfo gpu = probeGpu(o.gpu);
  std::printf("  %s\n", describe(gpu).c_str());
  if (gpu.available) {
    // Cross-process sharing of device frames pays a GPU context switch per hand-off without MPS.
    std::printf("  sharing     %s\n", mpsHandoffNote(detectMps()).c_str());
    const JpegSupport jpeg = probeJpeg(gpu.device);
    std::printf("  nvJPEG      %s\n",
                jpeg.available ? ("nvJPEG " + jpeg.libraryVersion + ", " +
                                  (jpeg.hardware ? "hardware JPEG engines (" + jpeg.hardwareReason + ")"
                                                 : "GPU-hybrid (no hardware engines: " + jpeg.hardwareReason + ")"))
                                     .c_str()
                               : ("unavailable: " + jpeg.reason).c_str());
    std::printf("  NVDEC       %s\n", describe(probeNvdec(gpu.device)).c_str());
  }
#else
  std::printf("  this build has no CUDA targets (nvcc was not found at build time)\n");
#endif
  std::printf("\nencoders\n");
  std::printf("  x264        libavcodec libx264: available\n");
  // The same answer makeEncoder and `serve --encoder auto|nvenc` act on.
  const NvencAvailability nvenc = probeNvenc(o.gpu);
  std::printf("  nvenc       %s\n", describe(nvenc).c_str());

  // The same decisions serve makes (placeCameras, choosePath), for each camera and each kind of camera.
  const std::vector<CameraConfig> cams = configuredCameras(o);
  printGpus(cams);
  printConfiguredCameras(cams);
  std::printf("\npath (serve --gpu auto), by what the camera delivers\n");
  const std::string gpuOption = o.gpu >= 0 ? std::to_string(o.gpu) : "auto";
  for (const auto& [label, format] : {std::pair{"raw (yuyv)", PixelFormat::kYUYV}, std::pair{"mjpeg", PixelFormat::kMJPEG},
                                      std::pair{"h264", PixelFormat::kH264}}) {
    std::string line;
    try {
      const GpuPathChoice choice = choosePath(gpuOption, format);
      line = choice.reason;
      if (choice.useGpu) {
        line += "; " + chooseGpuEncoder("auto", nvenc).reason;
      } else if (format != PixelFormat::kH264) {
        line += "; x264 encodes it";
      }
    } catch (const Error& e) {
      line = std::string("refused: ") + e.what();
    }
    std::printf("  %-11s %s\n", label, line.c_str());
  }
  return 0;
}

}  // namespace

Runner addProbeCommand(CLI::App& app) {
  auto o = std::make_shared<ProbeOptions>();
  auto* cmd = app.add_subcommand("probe", "Show the cameras, GPU, encoders and the data path serve would choose, and why");
  cmd->add_option("--gpu", o->gpu, "CUDA device to probe (default: the first usable one)");
  cmd->add_option("--camera", o->cameras,
                  "NAME=SOURCE, repeatable, as serve takes it: also say what each camera would use "
                  "([[camera]] tables of --config are listed too)");
  cmd->add_option("camera", o->rtspCamera,
                  "an IP camera, rtsp://[user:password@]host[:port]/path: say only what it offers (streams, size, rate)");
  return [o, cmd] {
    if (const CLI::Option* config = cmd->get_parent()->get_config_ptr(); config && config->count() > 0) {
      o->configPath = config->as<std::string>();
    }
    return runProbe(*o);
  };
}

}  // namespace zerohop::cli
