#include "gpupath/cuda_scaler.hpp"

#include <cuda_runtime_api.h>

#include <map>
#include <optional>
#include <string>
#include <utility>

#include "gpu/convert_plan.hpp"
#include "gpu/cuda_check.hpp"
#include "zerohop/buffer_pool.hpp"
#include "zerohop/error.hpp"
#include "zerohop/gpu.hpp"
#include "zerohop/gpu_convert.hpp"

namespace zerohop {
namespace {

constexpr std::uint32_t kDevicePitchAlign = 256;

std::string sizeText(const Frame& f) { return std::to_string(f.width) + "x" + std::to_string(f.height); }

class CudaScaler final : public FrameScaler {
 public:
  explicit CudaScaler(int device) : device_(device), converter_(device, IngestMode::kCopy) {}

  void scale(const Frame& src, Frame& dst) override {
    if (!gpuconvert::is420(src.format) || !gpuconvert::is420(dst.format)) {
      throw Error(Errc::kUnsupported, "the CUDA scaler takes nv12 or i420 to nv12 or i420, not " +
                                          std::string(formatName(src.format)) + " to " +
                                          std::string(formatName(dst.format)));
    }
    if (dst.width == 0 || dst.height == 0 || dst.width % 2 || dst.height % 2) {
      throw Error(Errc::kInvalidArgument, "a 4:2:0 destination needs an even size, got " + sizeText(dst));
    }
    const ConvertOptions whole;  // the whole source, scaled to dst's size
    if (dst.memory == MemoryKind::kDevice) {
      converter_.convert(src, dst, whole, nullptr, Completion::kWait);
    } else {
      Frame& scratch = scratchFor(dst);
      converter_.convert(src, scratch, whole);
      download(scratch, dst);
    }
    // The rung's picture is rung 0's frame: its capture and stage times stay those of that frame.
    dst.sequence = src.sequence;
    dst.wallClockMs = src.wallClockMs;
    dst.times = src.times;
    dst.color = src.color;
  }

 private:
  // A device frame of dst's format and size (one per size the ladder asks for, made once).
  Frame& scratchFor(const Frame& dst) {
    const auto key = std::make_pair(static_cast<int>(dst.format), (std::uint64_t{dst.width} << 32) | dst.height);
    auto it = scratch_.find(key);
    if (it == scratch_.end()) {
      BufferPool pool(computeLayout(dst.format, dst.width, dst.height, kDevicePitchAlign), 1,
                      makeDeviceAllocator(device_));
      std::optional<FrameLease> lease = pool.tryAcquire();
      if (!lease) throw Error(Errc::kInternal, "CUDA scaler: no device frame for " + sizeText(dst));
      it = scratch_.emplace(key, Scratch{std::move(pool), std::move(*lease)}).first;
    }
    return it->second.lease.frame();
  }

  // One copy per plane of the scaled picture into dst's memory, after the resample (same stream).
  void download(const Frame& dev, Frame& dst) {
    cuda::DeviceGuard guard(device_);
    auto* stream = static_cast<cudaStream_t>(converter_.stream());
    for (std::uint32_t p = 0; p < dev.planeCount; ++p) {
      const gpuconvert::PlaneShape shape = gpuconvert::planeShape(dev.format, p, dev.width, dev.height);
      cuda::check(cudaMemcpy2DAsync(dst.data[p], dst.pitch[p], dev.data[p], dev.pitch[p], shape.widthBytes, shape.rows,
                                    cudaMemcpyDeviceToHost, stream),
                  "cudaMemcpy2DAsync(scaled rendition -> host)");
    }
    cuda::check(cudaStreamSynchronize(stream), "cudaStreamSynchronize(CUDA scaler)");
  }

  struct Scratch {
    BufferPool pool;  // declared before its lease: the lease goes back first
    FrameLease lease;
  };
  int device_;
  GpuConverter converter_;
  std::map<std::pair<int, std::uint64_t>, Scratch> scratch_;
};

}  // namespace

std::unique_ptr<FrameScaler> makeCudaScaler(int device) { return std::make_unique<CudaScaler>(device); }

}  // namespace zerohop
