#include "gpu/cuda_handles.hpp"

#include <string>

#include "gpu/cuda_check.hpp"

namespace zerohop {

using cuda::check;
using cuda::logIfFailed;

namespace {
// Makes `device` current for a destructor; logs instead of throwing.
class QuietDeviceScope {
 public:
  explicit QuietDeviceScope(int device) noexcept {
    if (device < 0 || cudaGetDevice(&previous_) != cudaSuccess || previous_ == device) return;
    changed_ = cudaSetDevice(device) == cudaSuccess;
  }
  ~QuietDeviceScope() {
    if (changed_) logIfFailed(cudaSetDevice(previous_), "cudaSetDevice (restore)");
  }
  QuietDeviceScope(const QuietDeviceScope&) = delete;
  QuietDeviceScope& operator=(const QuietDeviceScope&) = delete;

 private:
  int previous_ = -1;
  bool changed_ = false;
};
}  // namespace

// ---- CudaStream ---------------------------------------------------------------------------------
CudaStream::CudaStream(int device) : device_(device) {
  cuda::DeviceGuard guard(device);
  check(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking), "cudaStreamCreateWithFlags");
}

CudaStream& CudaStream::operator=(CudaStream&& o) noexcept {
  if (this != &o) {
    reset();
    stream_ = std::exchange(o.stream_, nullptr);
    device_ = std::exchange(o.device_, -1);
  }
  return *this;
}

void CudaStream::synchronize() const { check(cudaStreamSynchronize(stream_), "cudaStreamSynchronize"); }

void CudaStream::reset() noexcept {
  if (!stream_) return;
  QuietDeviceScope scope(device_);
  // Finish pending work first: whatever it writes must not outlive the buffers behind it.
  logIfFailed(cudaStreamSynchronize(stream_), "cudaStreamSynchronize (teardown)");
  logIfFailed(cudaStreamDestroy(stream_), "cudaStreamDestroy");
  stream_ = nullptr;
}

// ---- CudaEvent ----------------------------------------------------------------------------------
CudaEvent::CudaEvent(int device, bool timing) : device_(device) {
  cuda::DeviceGuard guard(device);
  check(cudaEventCreateWithFlags(&event_, timing ? cudaEventDefault : cudaEventDisableTiming),
        "cudaEventCreateWithFlags");
}

CudaEvent& CudaEvent::operator=(CudaEvent&& o) noexcept {
  if (this != &o) {
    reset();
    event_ = std::exchange(o.event_, nullptr);
    device_ = std::exchange(o.device_, -1);
  }
  return *this;
}

void CudaEvent::record(cudaStream_t stream) const { check(cudaEventRecord(event_, stream), "cudaEventRecord"); }
void CudaEvent::synchronize() const { check(cudaEventSynchronize(event_), "cudaEventSynchronize"); }

float CudaEvent::elapsedMsSince(const CudaEvent& start) const {
  float ms = 0;
  check(cudaEventElapsedTime(&ms, start.event_, event_), "cudaEventElapsedTime");
  return ms;
}

void CudaEvent::reset() noexcept {
  if (!event_) return;
  QuietDeviceScope scope(device_);
  logIfFailed(cudaEventDestroy(event_), "cudaEventDestroy");
  event_ = nullptr;
}

// ---- DeviceBuffer -------------------------------------------------------------------------------
DeviceBuffer::DeviceBuffer(int device, std::size_t bytes) : bytes_(bytes), device_(device) {
  cuda::DeviceGuard guard(device);
  void* p = nullptr;
  check(cudaMalloc(&p, bytes), "cudaMalloc", std::to_string(bytes) + " bytes on device " + std::to_string(device));
  data_ = static_cast<std::uint8_t*>(p);
}

DeviceBuffer& DeviceBuffer::operator=(DeviceBuffer&& o) noexcept {
  if (this != &o) {
    reset();
    data_ = std::exchange(o.data_, nullptr);
    bytes_ = std::exchange(o.bytes_, 0);
    device_ = std::exchange(o.device_, -1);
  }
  return *this;
}

void DeviceBuffer::reset() noexcept {
  if (!data_) return;
  QuietDeviceScope scope(device_);
  logIfFailed(cudaFree(data_), "cudaFree");
  data_ = nullptr;
  bytes_ = 0;
}

// ---- PinnedBuffer -------------------------------------------------------------------------------
unsigned pinnedAllocFlags(int device) {
  int canMap = 0;
  check(cudaDeviceGetAttribute(&canMap, cudaDevAttrCanMapHostMemory, device),
        "cudaDeviceGetAttribute(cudaDevAttrCanMapHostMemory)");
  return cudaHostAllocPortable | (canMap ? cudaHostAllocMapped : 0u);
}

PinnedBuffer::PinnedBuffer(int device, std::size_t bytes) : bytes_(bytes) {
  cuda::DeviceGuard guard(device);
  void* p = nullptr;
  check(cudaHostAlloc(&p, bytes, pinnedAllocFlags(device)), "cudaHostAlloc", std::to_string(bytes) + " bytes");
  data_ = static_cast<std::uint8_t*>(p);
}

PinnedBuffer& PinnedBuffer::operator=(PinnedBuffer&& o) noexcept {
  if (this != &o) {
    reset();
    data_ = std::exchange(o.data_, nullptr);
    bytes_ = std::exchange(o.bytes_, 0);
  }
  return *this;
}

void PinnedBuffer::reset() noexcept {
  if (!data_) return;
  logIfFailed(cudaFreeHost(data_), "cudaFreeHost");
  data_ = nullptr;
  bytes_ = 0;
}

}  // namespace zerohop
