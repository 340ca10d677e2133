// ReadySemaphore and SharedFrame::signalWhenReady: a renderer's semaphore signalled by the GPU when a
// device frame's write completed. The CUDA work lives in the device transport (src/share/cuda/).
#include <unistd.h>

#include "share/device_transport.hpp"
#include "zerohop/error.hpp"
#include "zerohop/share.hpp"

namespace zerohop {

ReadySemaphore::ReadySemaphore(int fd, Kind kind, int device) : kind_(kind), device_(device) {
  share_detail::DeviceTransport* transport = share_detail::deviceTransport();
  if (transport == nullptr) {
    if (fd >= 0) ::close(fd);
    throw Error(Errc::kUnsupported,
                "ReadySemaphore: this process has no CUDA device transport (link zerohop::share_cuda, "
                "a libzerohop built with CUDA)");
  }
  if (fd < 0)
    throw Error(Errc::kInvalidArgument, "ReadySemaphore: no semaphore fd (" + std::to_string(fd) + ")");
  handle_ = transport->importSemaphore(fd, kind == Kind::kTimeline, device);
}

void SharedFrame::signalWhenReady(ReadySemaphore& semaphore, std::uint64_t value) const {
  if (!lease_) throw Error(Errc::kInvalidArgument, "SharedFrame::signalWhenReady: the frame was released");
  const Frame& f = frame();
  if (f.memory != MemoryKind::kDevice)
    throw Error(
        Errc::kInvalidArgument,
        "SharedFrame::signalWhenReady: a host frame is complete at commit; there is nothing to wait for");
  if (!semaphore.handle_)
    throw Error(Errc::kInvalidArgument, "SharedFrame::signalWhenReady: an empty ReadySemaphore");
  if (semaphore.device_ != f.gpu.device)
    throw Error(Errc::kInvalidArgument,
                "SharedFrame::signalWhenReady: the semaphore was imported on CUDA device " +
                    std::to_string(semaphore.device_) + ", the frame is read on device " +
                    std::to_string(f.gpu.device));
  share_detail::DeviceTransport* transport = share_detail::deviceTransport();
  if (transport == nullptr)
    throw Error(Errc::kUnsupported,
                "SharedFrame::signalWhenReady: a device frame in a reader built without CUDA");
  transport->signalSemaphore(semaphore.handle_.get(), semaphore.kind_ == ReadySemaphore::Kind::kTimeline,
                             value, f.gpu.readyEvent, f.gpu.device);
}

}  // namespace zerohop
