// renderGpuTopology: the "gpus" section of `zerohop probe`. Pure (tested on made-up device lists).
#include <cstdio>

#include "gpupath/gpu_placement.hpp"

namespace zerohop {

std::string renderGpuTopology(const GpuTopology& t, const std::vector<CameraPlacement>& placement) {
  std::string out = "gpus\n";
  if (t.devices.empty()) {
    out += "  none: " + (t.reason.empty() ? std::string("no CUDA device") : t.reason) + "\n";
  }
  for (const GpuTopologyDevice& d : t.devices) {
    char line[256];
    std::snprintf(line, sizeof line, "  GPU %d      %s, %.0f GiB, PCI %s\n", d.ordinal, d.name.c_str(),
                  static_cast<double>(d.memoryBytes) / (1024.0 * 1024 * 1024), d.pciBusId.c_str());
    out += line;
    std::string cams;
    for (const CameraPlacement& p : placement) {
      if (p.device != d.ordinal) continue;
      cams += (cams.empty() ? "" : ", ") + p.name + (p.automatic ? " (auto)" : "");
    }
    if (!placement.empty()) out += "             cameras: " + (cams.empty() ? std::string("none") : cams) + "\n";
  }
  for (const GpuPairLink& l : t.links) {
    out += "  GPU " + std::to_string(l.a) + " <-> GPU " + std::to_string(l.b) + ": " + l.link + ", P2P " +
           (l.peer ? "yes (a reader on one GPU reads the other's ring in place)"
                   : "no (a reader on the other GPU gets one device-to-device copy per frame)") +
           "\n";
  }
  std::string unplaced;
  for (const CameraPlacement& p : placement) {
    if (p.device < 0) unplaced += (unplaced.empty() ? "" : ", ") + p.name;
  }
  if (!unplaced.empty()) out += "  no GPU:    " + unplaced + "\n";
  return out;
}

}  // namespace zerohop
