// choosePath for builds with CUDA: the GPU path whenever a CUDA device works and the GPU converts
// the source's format; the reason in words either way (serve logs it, probe prints it).
#include "gpupath/gpu_option.hpp"
#include "gpupath/gpu_path.hpp"
#include "gpupath/gpu_placement.hpp"
#include "zerohop/error.hpp"
#include "zerohop/gpu.hpp"
#include "zerohop/gpu_convert.hpp"
#include "zerohop/gpu_jpeg.hpp"
#include "zerohop/setting_error.hpp"

namespace zerohop {

GpuDevicePlan planGpuDevice(const std::string& gpuOption) { return planGpuDevice(gpuOption, -1); }

GpuDevicePlan planGpuDevice(const std::string& gpuOption, int autoDevice) {
  using gpupath::GpuOption;
  const GpuOption option = gpupath::parseGpuOption(gpuOption);
  GpuDevicePlan plan;
  plan.option = gpuOption;
  plan.explicitDevice = option.kind == GpuOption::Kind::kDevice;
  if (option.kind == GpuOption::Kind::kOff) {
    plan.reason = "CPU path, because gpu is \"off\"";
    return plan;
  }
  const GpuInfo gpu = probeGpu(option.kind == GpuOption::Kind::kAuto ? autoDevice : option.device);
  if (!gpu.available) {
    if (plan.explicitDevice) {
      throw SettingError(Errc::kUnavailable, setting::kGpu,
                         "gpu \"" + gpuOption + "\": " + gpu.reason +
                             "; set gpu to \"auto\" (the CPU path where no device works) or \"off\"");
    }
    plan.reason = "CPU path, because there is no usable CUDA device (" + gpu.reason + ")";
    return plan;
  }
  plan.usable = true;
  plan.device = gpu.device;
  plan.description = describe(gpu);
  return plan;
}

GpuPathChoice choosePath(const GpuDevicePlan& plan, PixelFormat sourceFormat) {
  if (sourceFormat == PixelFormat::kH264) {
    return {false, -1, "no conversion: the camera's H.264 is sent on without decoding (passthrough)"};
  }
  if (!plan.usable) return {false, -1, plan.reason};
  const std::string format(formatName(sourceFormat));
  if (sourceFormat == PixelFormat::kMJPEG) {
    const JpegSupport jpeg = probeJpeg(plan.device);
    if (!jpeg.available) {
      if (plan.explicitDevice) {
        throw SettingError(Errc::kUnavailable, setting::kGpu,
                           "gpu \"" + plan.option + "\": MJPEG needs nvJPEG: " + jpeg.reason +
                               "; set gpu to \"off\" (the CPU path decodes MJPEG with libjpeg-turbo)");
      }
      return {false, -1, "CPU path: MJPEG is decoded by libjpeg-turbo, because nvJPEG cannot be used (" + jpeg.reason + ")"};
    }
    return {true, plan.device,
            "GPU path: " + plan.description + " decodes MJPEG to NV12 in VRAM with nvJPEG " + jpeg.libraryVersion + " (" +
                (jpeg.hardware ? "hardware JPEG engines: " + jpeg.hardwareReason
                               : "GPU-hybrid; no hardware JPEG engines: " + jpeg.hardwareReason) + ")"};
  }
  if (!GpuConverter::supports(sourceFormat, PixelFormat::kNV12)) {
    return {false, -1, "CPU path: the GPU kernels do not convert " + format};
  }
  return {true, plan.device, "GPU path: " + plan.description + " converts " + format + " to NV12 in VRAM"};
}

GpuPathChoice choosePath(const std::string& gpuOption, PixelFormat sourceFormat) {
  // gpu "off" and passthrough need no probe at all.
  if (gpupath::parseGpuOption(gpuOption).kind == gpupath::GpuOption::Kind::kOff)
    return {false, -1, "CPU path, because gpu is \"off\""};
  if (sourceFormat == PixelFormat::kH264) return choosePath(GpuDevicePlan{}, sourceFormat);
  return choosePath(planGpuDevice(gpuOption), sourceFormat);
}

int usableGpuCount() {
  const GpuInfo gpu = probeGpu(-1);
  return gpu.available ? gpu.deviceCount : 0;
}

std::unique_ptr<FrameAllocator> makeIngestAllocator(int device) { return makePinnedAllocator(device); }
std::unique_ptr<FrameAllocator> makeVramAllocator(int device) {
  return makeDeviceAllocator(device);
}

}  // namespace zerohop
