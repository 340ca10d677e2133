#include <string>

#include "zerohop/nvenc.hpp"

namespace zerohop {

std::string describe(const NvencAvailability& n) {
  if (!n.available) return "unavailable: " + n.reason;
  std::string line = "available on " + (n.deviceName.empty() ? "CUDA device " + std::to_string(n.device) : n.deviceName);
  line += " (H.264";
  if (n.hevc) line += ", HEVC";
  line += "; driver NVENC API " + n.driverApi + ", built for " + n.builtApi + ")";
  return line;
}

}  // namespace zerohop
