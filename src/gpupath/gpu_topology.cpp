// probeGpuTopology: the CUDA devices and how each pair is linked. P2P from the CUDA runtime; whether
// the link is NVLink from NVML, loaded at run time (dlopen libnvidia-ml.so.1: no link dependency,
// so a machine without it still probes). Never throws.
#include <cuda_runtime_api.h>
#include <dlfcn.h>

#include "gpupath/gpu_placement.hpp"
#include "zerohop/gpu.hpp"

namespace zerohop {
namespace {

// The few NVML entry points used, declared by their stable C ABI (nvml.h is not needed).
using NvmlDevice = void*;
using NvmlInit = int (*)();
using NvmlShutdown = int (*)();
using NvmlByBusId = int (*)(const char*, NvmlDevice*);
using NvmlP2PStatus = int (*)(NvmlDevice, NvmlDevice, int, int*);
constexpr int kNvmlSuccess = 0;
constexpr int kNvmlP2PCapsNvlink = 2;  // NVML_P2P_CAPS_INDEX_NVLINK
constexpr int kNvmlP2PStatusOk = 0;    // NVML_P2P_STATUS_OK

/// NVML for the life of one probe: loaded, initialised, shut down and unloaded in reverse.
class Nvml {
 public:
  Nvml() {
    lib_ = ::dlopen("libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!lib_) return;
    auto init = reinterpret_cast<NvmlInit>(::dlsym(lib_, "nvmlInit_v2"));
    shutdown_ = reinterpret_cast<NvmlShutdown>(::dlsym(lib_, "nvmlShutdown"));
    byBusId_ = reinterpret_cast<NvmlByBusId>(::dlsym(lib_, "nvmlDeviceGetHandleByPciBusId_v2"));
    p2p_ = reinterpret_cast<NvmlP2PStatus>(::dlsym(lib_, "nvmlDeviceGetP2PStatus"));
    ok_ = init && shutdown_ && byBusId_ && p2p_ && init() == kNvmlSuccess;
  }
  ~Nvml() {
    if (ok_) shutdown_();
    if (lib_) ::dlclose(lib_);
  }
  Nvml(const Nvml&) = delete;
  Nvml& operator=(const Nvml&) = delete;

  bool ok() const noexcept { return ok_; }
  /// "NVLink" / "PCIe", or "" when NVML cannot say.
  std::string link(const std::string& busA, const std::string& busB) const {
    NvmlDevice a = nullptr, b = nullptr;
    if (!ok_ || byBusId_(busA.c_str(), &a) != kNvmlSuccess || byBusId_(busB.c_str(), &b) != kNvmlSuccess) return {};
    int status = -1;
    if (p2p_(a, b, kNvmlP2PCapsNvlink, &status) != kNvmlSuccess) return {};
    return status == kNvmlP2PStatusOk ? "NVLink" : "PCIe";
  }

 private:
  void* lib_ = nullptr;
  NvmlShutdown shutdown_ = nullptr;
  NvmlByBusId byBusId_ = nullptr;
  NvmlP2PStatus p2p_ = nullptr;
  bool ok_ = false;
};

}  // namespace

GpuTopology probeGpuTopology() {
  GpuTopology t;
  int count = 0;
  const cudaError_t st = cudaGetDeviceCount(&count);
  if (st != cudaSuccess || count == 0) {
    (void)cudaGetLastError();
    t.reason = probeGpu(-1).reason;  // the same words as the "gpu" section
    if (t.reason.empty()) t.reason = "the driver reports no CUDA device (check CUDA_VISIBLE_DEVICES)";
    return t;
  }
  for (int i = 0; i < count; ++i) {
    GpuTopologyDevice d;
    d.ordinal = i;
    cudaDeviceProp prop{};
    if (cudaGetDeviceProperties(&prop, i) == cudaSuccess) {
      d.name = prop.name;
      d.memoryBytes = prop.totalGlobalMem;
    }
    char bus[32]{};
    if (cudaDeviceGetPCIBusId(bus, sizeof bus, i) == cudaSuccess) d.pciBusId = bus;
    (void)cudaGetLastError();
    t.devices.push_back(std::move(d));
  }
  const Nvml nvml;
  t.nvml = nvml.ok();
  for (int a = 0; a < count; ++a) {
    for (int b = a + 1; b < count; ++b) {
      GpuPairLink l;
      l.a = a;
      l.b = b;
      int ab = 0, ba = 0;
      if (cudaDeviceCanAccessPeer(&ab, a, b) != cudaSuccess || cudaDeviceCanAccessPeer(&ba, b, a) != cudaSuccess) {
        (void)cudaGetLastError();
        ab = ba = 0;
      }
      l.peer = ab && ba;
      l.link = nvml.link(t.devices[a].pciBusId, t.devices[b].pciBusId);
      if (l.link.empty()) l.link = t.nvml ? "unknown (NVML could not say)" : "unknown (no NVML)";
      t.links.push_back(std::move(l));
    }
  }
  return t;
}

}  // namespace zerohop
