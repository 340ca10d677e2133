#include "gpu/cuda_handles.hpp"

#include <cuda.h>

#include <string>

#include "gpu/cuda_check.hpp"
#include "gpu/driver_entry.hpp"
#include "zerohop/error.hpp"
#include "zerohop/log.hpp"

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
int highestStreamPriority(int device) {
  cuda::DeviceGuard guard(device);
  int least = 0, greatest = 0;
  check(cudaDeviceGetStreamPriorityRange(&least, &greatest), "cudaDeviceGetStreamPriorityRange");
  return greatest;
}

CudaStream::CudaStream(int device, int priority) : device_(device) {
  cuda::DeviceGuard guard(device);
  if (priority == 0) {
    check(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking), "cudaStreamCreateWithFlags");
  } else {
    check(cudaStreamCreateWithPriority(&stream_, cudaStreamNonBlocking, priority), "cudaStreamCreateWithPriority");
  }
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

bool CudaEvent::completed() const {
  const cudaError_t status = cudaEventQuery(event_);
  if (status == cudaErrorNotReady) {
    // "Not ready" is an answer, not an error: do not leave it for the next cudaGetLastError (checkLaunch).
    if (cudaPeekAtLastError() == cudaErrorNotReady) (void)cudaGetLastError();
    return false;
  }
  check(status, "cudaEventQuery");
  return true;
}

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

// ---- StreamFlag ---------------------------------------------------------------------------------
namespace {
using WriteValue32 = decltype(&cuStreamWriteValue32);
}  // namespace

StreamFlag::StreamFlag(int device, bool allowStreamWrite) : word_(device, sizeof(std::uint32_t)), device_(device) {
  cuda::DeviceGuard guard(device);
  check(cudaMemset(word_.data(), 0, sizeof(std::uint32_t)), "cudaMemset(stream flag)");
  check(cudaDeviceSynchronize(), "cudaDeviceSynchronize(stream flag)");
  if (allowStreamWrite) writeValue_ = cuda::driverEntryPoint("cuStreamWriteValue32");
}

StreamFlag::~StreamFlag() = default;  // members: the events, then the ring, then the word
StreamFlag::StreamFlag(StreamFlag&& o) noexcept { *this = std::move(o); }

StreamFlag& StreamFlag::operator=(StreamFlag&& o) noexcept {
  if (this != &o) {
    for (int i = 0; i < kRing; ++i) ringCopied_[i] = std::move(o.ringCopied_[i]);
    ring_ = std::move(o.ring_);
    word_ = std::move(o.word_);
    writeValue_ = std::exchange(o.writeValue_, nullptr);
    next_ = std::exchange(o.next_, 0);
    device_ = std::exchange(o.device_, -1);
  }
  return *this;
}

void StreamFlag::set(cudaStream_t stream, std::uint32_t value) {
  if (writeValue_) {
    const CUresult status = reinterpret_cast<WriteValue32>(writeValue_)(
        stream, reinterpret_cast<CUdeviceptr>(word_.data()), value, CU_STREAM_WRITE_VALUE_DEFAULT);
    if (status == CUDA_SUCCESS) return;
    if (status != CUDA_ERROR_NOT_SUPPORTED) {
      throw Error(Errc::kDevice, "cuStreamWriteValue32 failed: " + cuda::driverErrorName(status) + " (stream flag)");
    }
    log::warn("cuStreamWriteValue32: not supported here (CUDA_ERROR_NOT_SUPPORTED); stream flags are copied instead");
    writeValue_ = nullptr;
  }
  if (!ring_.data()) {
    ring_ = PinnedBuffer(device_, kRing * sizeof(std::uint32_t));
    for (auto& e : ringCopied_) e = CudaEvent(device_, /*timing=*/false);
  } else {
    ringCopied_[next_].synchronize();  // the copy that last read this word has run (long since, normally)
  }
  auto* slot = reinterpret_cast<std::uint32_t*>(ring_.data()) + next_;
  *slot = value;
  check(cudaMemcpyAsync(word_.data(), slot, sizeof(std::uint32_t), cudaMemcpyHostToDevice, stream),
        "cudaMemcpyAsync(stream flag)");
  ringCopied_[next_].record(stream);
  next_ = (next_ + 1) % kRing;
}

const char* StreamFlag::writer() const noexcept { return writeValue_ ? "cuStreamWriteValue32" : "cudaMemcpyAsync"; }

}  // namespace zerohop
