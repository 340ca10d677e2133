#pragma once
// Which GPU each camera runs on. Several GPUs in one box: every camera's decode, conversion, device
// share ring and encode run on one CUDA device, chosen here once at start:
//   gpu = "N"     device N (a device that does not exist is an Error naming the camera)
//   gpu = "auto"  spread by load: cameras are taken heaviest first (ties in list order) and each goes
//                 to the device with the least load so far (ties: the lowest ordinal), counting the
//                 cameras that name their device first. Deterministic: the same list and device
//                 count always give the same placement.
//   gpu = "off"   the CPU path, no device.
// A camera's load is an estimate of its GPU work per second (estimateGpuLoad): megapixels per
// second weighted by what the GPU does with its format. placeCameras() is pure (no CUDA call), so it
// is tested without a device; serve and `zerohop probe` call it with usableGpuCount().
// Thread-safety: reentrant.

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "zerohop/pixel_format.hpp"

namespace zerohop {

/// What placement needs to know about one camera.
struct CameraLoadInput {
  std::string name;
  std::string gpu = "auto";                    ///< "auto", "off" or a device number (as CameraConfig::gpu)
  PixelFormat format = PixelFormat::kUnknown;  ///< kUnknown: weighed as a raw camera
  std::uint32_t width = 0;                     ///< 0: weighed as 1920
  std::uint32_t height = 0;                    ///< 0: weighed as 1080
  double fps = 0;                              ///< 0: weighed as 30
};

struct CameraPlacement {
  std::string name;
  int device = -1;         ///< the CUDA ordinal; -1: no device (gpu = "off", or auto with no usable GPU)
  bool automatic = false;  ///< chosen by gpu = "auto" (false: named by the camera, or off)
  double load = 0;         ///< estimateGpuLoad of the camera
  std::string reason;      ///< one line: why this device
};

/// The GPU work of a camera, in weighted megapixels per second: width x height x fps / 1e6 times 1
/// for raw formats (one upload + one conversion kernel + the encode), 2 for MJPEG (nvJPEG decode on
/// top), 0 for H.264 (passed through: no GPU work). Unknown size and rate: 1920x1080 at 30.
double estimateGpuLoad(PixelFormat format, std::uint32_t width, std::uint32_t height, double fps);

/// Places `cameras` on devices 0 .. deviceCount-1 (see the header comment). With deviceCount 0 an
/// explicit device is kept as named (the pipeline then reports why it cannot use it, as a lone
/// `--gpu N` does) and auto cameras get -1. Throws Error(kInvalidArgument) naming the camera for a
/// device number that is not one of deviceCount > 0 devices, or a malformed gpu value.
std::vector<CameraPlacement> placeCameras(const std::vector<CameraLoadInput>& cameras, int deviceCount);

/// CUDA devices this process can use (0 without a driver, a device or a CUDA build). Never throws.
int usableGpuCount();

/// One CUDA device as `zerohop probe` lists it.
struct GpuTopologyDevice {
  int ordinal = -1;
  std::string name;      ///< "NVIDIA H200"
  std::string pciBusId;  ///< "0000:19:00.0"
  std::size_t memoryBytes = 0;
};

/// How two devices reach each other.
struct GpuPairLink {
  int a = -1, b = -1;  ///< ordinals, a < b
  bool peer = false;   ///< cudaDeviceCanAccessPeer both ways: a reader on one reads the other's ring in place
  std::string link;    ///< "NVLink", "PCIe" (NVML says no NVLink) or "unknown (no NVML)"
};

struct GpuTopology {
  std::vector<GpuTopologyDevice> devices;
  std::vector<GpuPairLink> links;  ///< every pair, (0,1), (0,2), ... (1,2), ...
  bool nvml = false;               ///< the link kind came from NVML (libnvidia-ml.so.1, loaded at run time)
  std::string reason;              ///< why there are no devices ("" when there are)
};

/// The devices, their PCI bus ids and pairwise links: P2P from the CUDA runtime, NVLink or PCIe from
/// NVML when libnvidia-ml.so.1 loads (no link-time dependency). Never throws.
GpuTopology probeGpuTopology();

/// `zerohop probe`'s "gpus" section: each device, each pair's link and P2P, and the cameras each
/// would take (`placement`, from placeCameras; may be empty). Pure.
std::string renderGpuTopology(const GpuTopology& topology, const std::vector<CameraPlacement>& placement);

}  // namespace zerohop
