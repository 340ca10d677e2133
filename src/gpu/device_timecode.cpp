#include "gpu/device_timecode.hpp"

#include <cuda_runtime_api.h>

#include <vector>

#include "gpu/cuda_check.hpp"

namespace zerohop::gpu {

std::optional<Timecode> readFrameTimecode(const Frame& frame) {
  if (frame.memory != MemoryKind::kDevice) return readTimecode(frame);
  std::uint32_t step = 0;
  switch (frame.format) {
    case PixelFormat::kNV12:
    case PixelFormat::kI420: step = 1; break;
    case PixelFormat::kYUYV:
    case PixelFormat::kUYVY: step = 2; break;
    default: return std::nullopt;
  }
  if (frame.data[0] == nullptr) return std::nullopt;
  const std::uint32_t cell = timecodeCellSize(frame.width);
  const std::uint32_t stripBytes = cell * kTimecodeCells * step;
  if (cell * kTimecodeCells > frame.width || cell > frame.height || stripBytes > frame.pitch[0]) return std::nullopt;

  cuda::DeviceGuard device(frame.gpu.device >= 0 ? frame.gpu.device : 0);
  if (frame.gpu.readyEvent != nullptr) {
    cuda::check(cudaEventSynchronize(static_cast<cudaEvent_t>(frame.gpu.readyEvent)), "cudaEventSynchronize",
                "the frame's ready event, before reading its timecode");
  }
  std::vector<std::uint8_t> strip(std::size_t{stripBytes} * cell);
  cuda::check(cudaMemcpy2D(strip.data(), stripBytes, frame.data[0], frame.pitch[0], stripBytes, cell,
                           cudaMemcpyDeviceToHost),
              "cudaMemcpy2D", "the timecode strip of a device frame");
  Frame host;
  host.format = frame.format;
  host.width = frame.width;
  host.height = cell;
  host.memory = MemoryKind::kHost;
  host.planeCount = 1;
  host.data[0] = strip.data();
  host.pitch[0] = stripBytes;
  return readTimecode(host);
}

}  // namespace zerohop::gpu
