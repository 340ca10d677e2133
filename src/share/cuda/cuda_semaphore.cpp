#include "share/cuda/cuda_semaphore.hpp"

#include <unistd.h>

#include <exception>
#include <string>

#include "gpu/cuda_check.hpp"
#include "zerohop/log.hpp"

namespace zerohop::share_detail {

CudaSemaphore::CudaSemaphore(int fd, bool timeline, int device) : timeline_(timeline), device_(device) {
  try {
    stream_ = CudaStream(device);
    const cuda::DeviceGuard guard(device);
    cudaExternalSemaphoreHandleDesc desc{};
    desc.type = timeline ? cudaExternalSemaphoreHandleTypeTimelineSemaphoreFd
                         : cudaExternalSemaphoreHandleTypeOpaqueFd;
    desc.handle.fd = fd;
    cuda::check(cudaImportExternalSemaphore(&semaphore_, &desc), "cudaImportExternalSemaphore",
                std::string(timeline ? "a timeline" : "a binary") + " semaphore's opaque fd on device " +
                    std::to_string(device));
  } catch (...) {
    ::close(fd);  // CUDA owns it only once imported
    throw;
  }
}

CudaSemaphore::~CudaSemaphore() {
  try {
    stream_.synchronize();  // the renderer's waits are on signals queued here
    if (lastForeign_.get() != nullptr) lastForeign_.synchronize();  // and those queued on a producer's stream
  } catch (const std::exception& e) {
    log::warn("ReadySemaphore: waiting for its last signals: ", e.what());
  }
  try {
    const cuda::DeviceGuard guard(device_);
    if (const cudaError_t st = cudaDestroyExternalSemaphore(semaphore_); st != cudaSuccess)
      log::warn("ReadySemaphore: ", cuda::errorText("cudaDestroyExternalSemaphore", st));
  } catch (const std::exception& e) {
    log::warn("ReadySemaphore: destroying the import: ", e.what());
  }
}

void CudaSemaphore::signalOn(void* stream, std::uint64_t value) {
  const cuda::DeviceGuard guard(device_);
  if (lastForeign_.get() == nullptr) lastForeign_ = CudaEvent(device_, false);
  cudaExternalSemaphoreSignalParams params{};
  if (timeline_) params.params.fence.value = value;
  const auto s = static_cast<cudaStream_t>(stream);
  cuda::check(cudaSignalExternalSemaphoresAsync(&semaphore_, &params, 1, s),
              "cudaSignalExternalSemaphoresAsync", "a reader's semaphore, on the producer's stream");
  lastForeign_.record(s);
}

void CudaSemaphore::signalAfter(void* readyEvent, std::uint64_t value) {
  const cuda::DeviceGuard guard(device_);
  if (readyEvent != nullptr)
    cuda::check(cudaStreamWaitEvent(stream_.get(), static_cast<cudaEvent_t>(readyEvent), 0),
                "cudaStreamWaitEvent", "the frame's ready event (SharedFrame::signalWhenReady)");
  cudaExternalSemaphoreSignalParams params{};
  if (timeline_) params.params.fence.value = value;
  cuda::check(cudaSignalExternalSemaphoresAsync(&semaphore_, &params, 1, stream_.get()),
              "cudaSignalExternalSemaphoresAsync", "the renderer's semaphore (SharedFrame::signalWhenReady)");
}

}  // namespace zerohop::share_detail
