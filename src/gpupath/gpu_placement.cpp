// placeCameras: which GPU each camera runs on. Pure: no CUDA call (usableGpuCount is in
// gpu_count.cpp / gpu_path_unbuilt.cpp).
#include "gpupath/gpu_placement.hpp"

#include <algorithm>
#include <cstdio>
#include <numeric>

#include "gpupath/gpu_option.hpp"
#include "zerohop/error.hpp"
#include "zerohop/setting_error.hpp"

namespace zerohop {
namespace {

std::string loadText(double load) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f", load);
  return buf;
}

}  // namespace

double estimateGpuLoad(PixelFormat format, std::uint32_t width, std::uint32_t height, double fps) {
  if (format == PixelFormat::kH264) return 0;
  const double w = width ? width : 1920, h = height ? height : 1080, rate = fps > 0 ? fps : 30;
  const double weight = format == PixelFormat::kMJPEG ? 2.0 : 1.0;
  return w * h * rate / 1e6 * weight;
}

std::vector<CameraPlacement> placeCameras(const std::vector<CameraLoadInput>& cameras, int deviceCount) {
  using gpupath::GpuOption;
  std::vector<CameraPlacement> out(cameras.size());
  std::vector<double> deviceLoad(static_cast<std::size_t>(std::max(deviceCount, 0)), 0.0);
  std::vector<std::size_t> automatic;
  for (std::size_t i = 0; i < cameras.size(); ++i) {
    const CameraLoadInput& c = cameras[i];
    CameraPlacement& p = out[i];
    p.name = c.name;
    p.load = estimateGpuLoad(c.format, c.width, c.height, c.fps);
    GpuOption option;
    try {
      option = gpupath::parseGpuOption(c.gpu);
    } catch (const Error& e) {
      throw SettingError(Errc::kInvalidArgument, setting::kGpu, "camera \"" + c.name + "\": " + e.what());
    }
    if (option.kind == GpuOption::Kind::kOff) {
      p.reason = "gpu = \"off\": the CPU path";
    } else if (option.kind == GpuOption::Kind::kDevice) {
      if (deviceCount > 0 && option.device >= deviceCount) {
        throw SettingError(Errc::kInvalidArgument, setting::kGpu,
                           "camera \"" + c.name + "\": gpu = \"" + c.gpu + "\", but this machine has " +
                        std::to_string(deviceCount) + " CUDA device" + (deviceCount == 1 ? "" : "s") + " (0" +
                        (deviceCount > 1 ? " to " + std::to_string(deviceCount - 1) : std::string()) +
                        "): name one of them, \"auto\" or \"off\"");
      }
      p.device = option.device;
      p.reason = "gpu = \"" + c.gpu + "\"";
      if (deviceCount > 0) deviceLoad[static_cast<std::size_t>(p.device)] += p.load;
    } else if (deviceCount <= 0) {
      p.automatic = true;
      p.reason = "gpu = \"auto\", no usable CUDA device";
    } else {
      p.automatic = true;
      automatic.push_back(i);
    }
  }
  // Heaviest first (stable: ties keep the list order), each to the least-loaded device so far.
  std::stable_sort(automatic.begin(), automatic.end(),
                   [&](std::size_t a, std::size_t b) { return out[a].load > out[b].load; });
  for (const std::size_t i : automatic) {
    const auto least = std::min_element(deviceLoad.begin(), deviceLoad.end());  // first minimum: lowest ordinal
    CameraPlacement& p = out[i];
    p.device = static_cast<int>(least - deviceLoad.begin());
    p.reason = "gpu = \"auto\": the least-loaded device (" + loadText(*least) + " before, " + loadText(p.load) +
               " for this camera)";
    *least += p.load;
  }
  return out;
}

}  // namespace zerohop
