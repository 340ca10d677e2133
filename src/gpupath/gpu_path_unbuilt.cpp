// The GPU path of a build without CUDA (nvcc was not found at configure time): choosePath answers
// "CPU path" with that reason, and constructing a GpuFramePath (or a CUDA scaler) is an Error that says
// how to get one.
#include "gpupath/cuda_scaler.hpp"
#include "gpupath/gpu_option.hpp"
#include "gpupath/gpu_path.hpp"
#include "gpupath/gpu_placement.hpp"
#include "zerohop/error.hpp"
#include "zerohop/setting_error.hpp"

namespace zerohop {
namespace {
constexpr const char* kNotBuilt =
    "this zerohop was built without CUDA (nvcc was not found at configure time); install the CUDA toolkit and "
    "rebuild, or set gpu to \"off\" (the CPU path)";
}  // namespace

GpuDevicePlan planGpuDevice(const std::string& gpuOption, int) { return planGpuDevice(gpuOption); }

int usableGpuCount() { return 0; }

GpuTopology probeGpuTopology() {
  GpuTopology t;
  t.reason = "this build has no CUDA (nvcc was not found at configure time)";
  return t;
}

GpuDevicePlan planGpuDevice(const std::string& gpuOption) {
  using gpupath::GpuOption;
  const GpuOption option = gpupath::parseGpuOption(gpuOption);
  GpuDevicePlan plan;
  plan.option = gpuOption;
  if (option.kind == GpuOption::Kind::kOff) {
    plan.reason = "CPU path, because gpu is \"off\"";
    return plan;
  }
  if (option.kind == GpuOption::Kind::kDevice)
    throw SettingError(Errc::kUnsupported, setting::kGpu, "gpu \"" + gpuOption + "\": " + kNotBuilt);
  plan.reason = "CPU path, because this build has no CUDA (nvcc was not found at configure time)";
  return plan;
}

GpuPathChoice choosePath(const GpuDevicePlan& plan, PixelFormat sourceFormat) {
  if (sourceFormat == PixelFormat::kH264)
    return {false, -1, "no conversion: the camera's H.264 is sent on without decoding (passthrough)"};
  return {false, -1, plan.reason};
}

GpuPathChoice choosePath(const std::string& gpuOption, PixelFormat sourceFormat) {
  return choosePath(planGpuDevice(gpuOption), sourceFormat);
}

std::unique_ptr<FrameAllocator> makeIngestAllocator(int) {
  throw Error(Errc::kUnsupported, std::string("GPU path: ") + kNotBuilt);
}

std::unique_ptr<FrameAllocator> makeVramAllocator(int) {
  throw Error(Errc::kUnsupported, std::string("GPU path: ") + kNotBuilt);
}

struct GpuFramePath::Impl {};

ImageLayout GpuFramePath::deviceLayout(std::uint32_t width, std::uint32_t height) {
  return computeLayout(PixelFormat::kNV12, width, height, 256);
}

GpuFramePath::GpuFramePath(const GpuPathConfig&) { throw Error(Errc::kUnsupported, std::string("GPU path: ") + kNotBuilt); }
GpuFramePath::~GpuFramePath() = default;
GpuPathOutput GpuFramePath::process(const Frame&) { return {}; }
const Frame& GpuFramePath::downloadLast() { throw Error(Errc::kUnsupported, std::string("GPU path: ") + kNotBuilt); }
std::string GpuFramePath::describe() const { return "GPU path: not built"; }
std::uint32_t GpuFramePath::shareReaders() const { return 0; }
std::unique_ptr<FrameScaler> makeCudaScaler(int) { throw Error(Errc::kUnavailable, std::string("CUDA scaler: ") + kNotBuilt); }
std::string GpuFramePath::shareSocketPath() const { return {}; }

}  // namespace zerohop
