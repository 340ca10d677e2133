#include "gpupath/gpu_option.hpp"

#include <charconv>

#include "zerohop/error.hpp"
#include "zerohop/setting_error.hpp"

namespace zerohop::gpupath {

GpuOption parseGpuOption(const std::string& text) {
  if (text == "auto") return {GpuOption::Kind::kAuto, -1};
  if (text == "off") return {GpuOption::Kind::kOff, -1};
  int device = -1;
  const char* end = text.data() + text.size();
  const auto [ptr, ec] = std::from_chars(text.data(), end, device);
  if (text.empty() || ec != std::errc{} || ptr != end || device < 0 || device > 255) {
    throw SettingError(Errc::kInvalidArgument, setting::kGpu,
                       "gpu takes auto, off or a CUDA device number (0, 1, ...); got '" + text + "'");
  }
  return {GpuOption::Kind::kDevice, device};
}

}  // namespace zerohop::gpupath
