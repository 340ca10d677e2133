// probeGpu: what CUDA device there is, if any, without ever crashing on a machine without one.
#include <cuda_runtime_api.h>

#include <cctype>
#include <cstdio>
#include <fstream>
#include <sstream>
#include <string>

#include "gpu/cuda_check.hpp"
#include "zerohop/gpu.hpp"

namespace zerohop {
namespace {

// Oldest compute capability this build carries machine code for (CMAKE_CUDA_ARCHITECTURES starts at 75).
constexpr int kMinCcMajor = 7;
constexpr int kMinCcMinor = 5;

std::string versionText(int v) { return std::to_string(v / 1000) + "." + std::to_string((v % 1000) / 10); }

std::string readFirstLine(const std::string& path) {
  std::ifstream in(path);
  std::string line;
  if (in) std::getline(in, line);
  return line;
}

// "NVRM version: NVIDIA UNIX x86_64 Kernel Module  580.159.03  Thu ..." or
// "NVRM version: NVIDIA UNIX Open Kernel Module for x86_64  580.159.04  Release Build ..." -> the
// first word after "Kernel Module" that starts with a digit and contains a dot.
std::string kernelModuleVersion() {
  const std::string line = readFirstLine("/proc/driver/nvidia/version");
  const auto pos = line.find("Kernel Module");
  if (pos == std::string::npos) return {};
  std::istringstream rest(line.substr(pos + 13));
  for (std::string word; rest >> word;) {
    if (std::isdigit(static_cast<unsigned char>(word[0])) && word.find('.') != std::string::npos) return word;
  }
  return {};
}

// sysfs current_link_speed "32.0 GT/s PCIe" -> generation 5.
int pcieGenFromSpeed(const std::string& speed) {
  double gts = 0;
  if (std::sscanf(speed.c_str(), "%lf", &gts) != 1) return -1;
  if (gts >= 60) return 6;
  if (gts >= 30) return 5;
  if (gts >= 15) return 4;
  if (gts >= 7.5) return 3;
  if (gts >= 4.5) return 2;
  if (gts >= 2) return 1;
  return -1;
}

void readPciLink(GpuInfo& info) {
  if (info.pciBusId.empty()) return;
  std::string id = info.pciBusId;
  for (auto& c : id) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  // cudaDeviceGetPCIBusId gives an 8-hex-digit domain ("00000000:01:00.0"); sysfs uses 4.
  if (id.size() > 12 && id.find(':') == 8) id = id.substr(4);
  const std::string dir = "/sys/bus/pci/devices/" + id + "/";
  info.pciGen = pcieGenFromSpeed(readFirstLine(dir + "current_link_speed"));
  const std::string width = readFirstLine(dir + "current_link_width");
  if (!width.empty()) {
    try {
      info.pciWidth = std::stoi(width);
    } catch (...) {
      info.pciWidth = -1;
    }
  }
}

int attribute(cudaDeviceAttr attr, int device) {
  int v = 0;
  if (cudaDeviceGetAttribute(&v, attr, device) != cudaSuccess) return 0;
  return v;
}

}  // namespace

GpuInfo probeGpu(int requested) {
  GpuInfo info;
  info.driverVersion = kernelModuleVersion();
  cudaRuntimeGetVersion(&info.cudaRuntimeVersion);
  if (cudaDriverGetVersion(&info.cudaDriverVersion) != cudaSuccess) info.cudaDriverVersion = 0;
  if (info.cudaDriverVersion == 0) {
    info.reason = "no NVIDIA driver: libcuda.so.1 could not be loaded (install the NVIDIA driver, or run on a machine with a GPU)";
    return info;
  }
  const cudaError_t countStatus = cudaGetDeviceCount(&info.deviceCount);
  if (countStatus != cudaSuccess) {
    (void)cudaGetLastError();
    if (countStatus == cudaErrorInsufficientDriver) {
      info.reason = "the NVIDIA driver supports CUDA " + versionText(info.cudaDriverVersion) +
                    " but this build needs CUDA " + versionText(info.cudaRuntimeVersion) + ": update the driver";
    } else {
      info.reason = cuda::errorText("cudaGetDeviceCount", countStatus);
    }
    info.deviceCount = 0;
    return info;
  }
  if (info.deviceCount == 0) {
    info.reason = "the NVIDIA driver is loaded but reports no CUDA device (check CUDA_VISIBLE_DEVICES)";
    return info;
  }
  info.device = requested < 0 ? 0 : requested;
  if (info.device >= info.deviceCount) {
    info.reason = "CUDA device " + std::to_string(info.device) + " requested but only " +
                  std::to_string(info.deviceCount) + " present";
    return info;
  }

  cudaDeviceProp prop{};
  const cudaError_t propStatus = cudaGetDeviceProperties(&prop, info.device);
  if (propStatus != cudaSuccess) {
    (void)cudaGetLastError();
    info.reason = cuda::errorText("cudaGetDeviceProperties", propStatus);
    return info;
  }
  info.name = prop.name;
  info.ccMajor = prop.major;
  info.ccMinor = prop.minor;
  info.totalMemoryBytes = prop.totalGlobalMem;
  info.multiprocessors = attribute(cudaDevAttrMultiProcessorCount, info.device);
  info.canMapHostMemory = attribute(cudaDevAttrCanMapHostMemory, info.device) != 0;
  info.unifiedAddressing = attribute(cudaDevAttrUnifiedAddressing, info.device) != 0;
  info.integrated = attribute(cudaDevAttrIntegrated, info.device) != 0;
  info.asyncEngineCount = attribute(cudaDevAttrAsyncEngineCount, info.device);
  char busId[32] = {};
  if (cudaDeviceGetPCIBusId(busId, sizeof busId, info.device) == cudaSuccess) info.pciBusId = busId;
  (void)cudaGetLastError();
  readPciLink(info);

  if (info.ccMajor < kMinCcMajor || (info.ccMajor == kMinCcMajor && info.ccMinor < kMinCcMinor)) {
    info.reason = info.name + " has compute capability " + std::to_string(info.ccMajor) + "." +
                  std::to_string(info.ccMinor) + "; this build needs " + std::to_string(kMinCcMajor) + "." +
                  std::to_string(kMinCcMinor) + " or newer";
    return info;
  }
  info.available = true;
  return info;
}

std::string describe(const GpuInfo& info) {
  if (!info.available) return "no usable CUDA device: " + info.reason;
  char mem[32];
  std::snprintf(mem, sizeof mem, "%.1f GiB", static_cast<double>(info.totalMemoryBytes) / (1024.0 * 1024 * 1024));
  std::string s = info.name + " (device " + std::to_string(info.device) + ", cc " + std::to_string(info.ccMajor) +
                  "." + std::to_string(info.ccMinor) + ", " + mem + ", " + std::to_string(info.multiprocessors) +
                  " SMs, driver " + (info.driverVersion.empty() ? std::string("?") : info.driverVersion) +
                  " / CUDA " + versionText(info.cudaDriverVersion) + ", runtime " +
                  versionText(info.cudaRuntimeVersion) + ", PCI " + info.pciBusId;
  if (info.pciGen > 0) s += " Gen" + std::to_string(info.pciGen) + " x" + std::to_string(info.pciWidth);
  s += info.canMapHostMemory ? ", zero-copy capable" : ", no host mapping";
  s += ")";
  return s;
}

}  // namespace zerohop
