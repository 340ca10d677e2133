// InputDevice with CUDA (input_device.hpp): per-slot ready events and copies into device slots.
#include <mutex>
#include <vector>

#include "gpu/cuda_check.hpp"
#include "gpu/cuda_handles.hpp"
#include "input_device.hpp"
#include "zerohop/error.hpp"
#include "zerohop/gpu.hpp"

namespace zerohop {
namespace {

class CudaInputDevice final : public InputDevice {
 public:
  CudaInputDevice(int device, std::uint32_t slots) : device_(device), stream_(device) {
    events_.reserve(slots);
    for (std::uint32_t i = 0; i < slots; ++i) events_.emplace_back(device, /*timing=*/false);
  }
  ~CudaInputDevice() override {
    cuda::DeviceGuard guard(device_);
    cuda::logIfFailed(cudaStreamSynchronize(stream_.get()), "cudaStreamSynchronize (input teardown)");
  }
  int device() const noexcept override { return device_; }
  std::unique_ptr<FrameAllocator> allocator() override { return makeDeviceAllocator(device_); }

  void* recordOn(std::uint32_t slot, void* stream) override {
    cuda::DeviceGuard guard(device_);
    const CudaEvent& e = events_.at(slot);
    e.record(static_cast<cudaStream_t>(stream));
    return e.get();
  }

  void* recordAfter(std::uint32_t slot, void* event) override {
    cuda::DeviceGuard guard(device_);
    std::lock_guard lock(streamMutex_);
    cuda::check(cudaStreamWaitEvent(stream_.get(), static_cast<cudaEvent_t>(event), 0),
                "cudaStreamWaitEvent(the frame's readyEvent)");
    const CudaEvent& e = events_.at(slot);
    e.record(stream_.get());
    return e.get();
  }

  void* copyIn(std::uint32_t slot, const Frame& src, const Frame& dst, void* stream) override {
    cuda::DeviceGuard guard(device_);
    std::unique_lock lock(streamMutex_, std::defer_lock);
    cudaStream_t s = static_cast<cudaStream_t>(stream);
    if (!s) {
      lock.lock();
      s = stream_.get();
    }
    if (src.gpu.readyEvent) {
      cuda::check(cudaStreamWaitEvent(s, static_cast<cudaEvent_t>(src.gpu.readyEvent), 0),
                  "cudaStreamWaitEvent(the frame's readyEvent)");
    }
    const ImageLayout layout = computeLayout(dst.format, dst.width, dst.height, 1);
    for (std::uint32_t i = 0; i < dst.planeCount; ++i) {
      cuda::check(cudaMemcpy2DAsync(dst.data[i], dst.pitch[i], src.data[i], src.pitch[i], layout.planes[i].widthBytes,
                                    layout.planes[i].rows, cudaMemcpyDefault, s),
                  "cudaMemcpy2DAsync", "plane " + std::to_string(i) + " into the input slot");
    }
    const CudaEvent& e = events_.at(slot);
    e.record(s);
    if (!stream) cuda::check(cudaStreamSynchronize(s), "cudaStreamSynchronize", "the copy into the input slot");
    return e.get();
  }

 private:
  int device_;
  CudaStream stream_;  // recordAfter and host-synchronous copies (guarded by streamMutex_)
  std::mutex streamMutex_;
  std::vector<CudaEvent> events_;  // one per slot, re-recorded each time the slot is written
};

}  // namespace

std::unique_ptr<InputDevice> InputDevice::open(int device, std::uint32_t slots) {
  return std::make_unique<CudaInputDevice>(device, slots);
}

}  // namespace zerohop
