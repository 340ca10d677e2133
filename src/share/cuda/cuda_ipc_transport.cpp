// The CUDA device transport of the share ring. Memory, one allocation for all slots (slot i at
// i * slotStride), exported one of two ways:
//   kCudaVmmFd      (preferred) cuMemCreate(POSIX_FILE_DESCRIPTOR) + cuMemExportToShareableHandle; the
//                   fd travels with the DeviceSlots message (SCM_RIGHTS); readers
//                   cuMemImportFromShareableHandle + cuMemMap + cuMemSetAccess (cuda_vmm.hpp)
//   kCudaIpcLegacy  (fallback where VMM fds are unsupported) cudaMalloc + cudaIpcGetMemHandle; readers
//                   cudaIpcOpenMemHandle(cudaIpcMemLazyEnablePeerAccess)
// Events, both ways: one cudaEventDisableTiming | cudaEventInterprocess event per slot, recorded
// after the slot's write, opened by readers with cudaIpcOpenEventHandle; a non-blocking stream for
// copying publishes. Readers find the GPU by PCI bus id (ordinals differ under CUDA_VISIBLE_DEVICES).
// Registered with zerohop_share at static-initialisation time; the anchor symbol below is what
// the INTERFACE link option `--undefined=zerohop_share_cuda_anchor` pulls in.
#include <cuda_runtime_api.h>

#include <cstring>
#include <string>
#include <vector>

#include "gpu/cuda_check.hpp"
#include "gpu/cuda_handles.hpp"
#include "share/cuda/cross_device_read.hpp"
#include "share/cuda/cuda_ipc_handles.hpp"
#include "share/cuda/cuda_semaphore.hpp"
#include "share/cuda/cuda_vmm.hpp"
#include "share/device_transport.hpp"
#include "zerohop/error.hpp"
#include "zerohop/log.hpp"

namespace zerohop::share_detail {
namespace {

std::string pciBusIdOf(int device) {
  char bus[32]{};
  cuda::check(cudaDeviceGetPCIBusId(bus, sizeof bus, device), "cudaDeviceGetPCIBusId",
              "device " + std::to_string(device));
  return bus;
}

/// Peer access from CUDA device `reader` to `owner` (cudaDeviceEnablePeerAccess in the reader's
/// context; already enabled is fine). False with the reason when it cannot.
bool enablePeerAccess(int reader, int owner, std::string& why) {
  try {
    cuda::DeviceGuard guard(reader);
    const cudaError_t st = cudaDeviceEnablePeerAccess(owner, 0);
    if (st == cudaSuccess || st == cudaErrorPeerAccessAlreadyEnabled) {
      (void)cudaGetLastError();
      return true;
    }
    (void)cudaGetLastError();
    why = cuda::errorText("cudaDeviceEnablePeerAccess", st);
  } catch (const std::exception& e) {
    why = e.what();
  }
  return false;
}

class CudaSlots final : public DeviceSlots {
 public:
  CudaSlots(const std::string& name, int device, std::uint64_t slotStride, std::uint32_t slots,
            ShareOptions::DeviceExport how)
      : name_(name), device_(device), stride_(slotStride), slots_(slots) {
    int count = 0;
    cuda::check(cudaGetDeviceCount(&count), "cudaGetDeviceCount");
    if (device < 0 || device >= count) {
      throw Error(Errc::kNotFound, "share '" + name + "': CUDA device " + std::to_string(device) +
                                       " does not exist (" + std::to_string(count) + " visible)");
    }
    std::string noVmm = how == ShareOptions::DeviceExport::kLegacyIpc ? "legacy CUDA IPC requested"
                                                                      : vmmUnsupportedReason(device);
    if (noVmm.empty()) {
      try {
        vmm_ = VmmExport(device, stride_ * slots);
        base_ = vmm_.data();
        info_.transport = Transport::kCudaVmmFd;
        info_.allocationBytes = vmm_.size();
      } catch (const Error& e) {
        if (how == ShareOptions::DeviceExport::kVmmFd) throw;
        noVmm = e.what();  // kAuto: fall back below
      }
    }
    if (!noVmm.empty()) {
      if (how == ShareOptions::DeviceExport::kVmmFd) {
        throw Error(Errc::kUnsupported, "share '" + name + "': CUDA VMM fd export requested, but " + noVmm +
                                            " (CUDA device " + std::to_string(device) + ")");
      }
      log::info("share '", name, "': legacy CUDA IPC for the device slots (", noVmm, ")");
      legacy_ = DeviceBuffer(device, stride_ * slots);
      base_ = legacy_.data();
      info_.transport = Transport::kCudaIpcLegacy;
      info_.allocationBytes = legacy_.size();
      cudaIpcMemHandle_t h{};
      cuda::check(cudaIpcGetMemHandle(&h, legacy_.data()), "cudaIpcGetMemHandle",
                  "share '" + name + "' slots");
      std::memcpy(info_.memHandle.data(), &h, sizeof h);
    }
    stream_ = CudaStream(device);
    cuda::DeviceGuard guard(device);
    // Zero the slots once so a reader never sees another process's old memory.
    cuda::check(cudaMemsetAsync(base_, 0, stride_ * slots, stream_.get()), "cudaMemsetAsync(share slots)");
    stream_.synchronize();
    info_.slotCount = slots;
    info_.slotStride = stride_;
    info_.pciBusId = pciBusIdOf(device);
    events_.reserve(slots);
    for (std::uint32_t i = 0; i < slots; ++i) {
      events_.emplace_back(device);
      // Record once so a reader waiting on a slot nobody wrote yet does not wait on nothing.
      cuda::check(cudaEventRecord(events_.back().get(), stream_.get()),
                  "cudaEventRecord(initial slot event)");
      eventHandles_.events.push_back(events_.back().exportHandle());
    }
  }

  ~CudaSlots() override {
    // Synchronise before freeing: the last write of every slot, and the copy stream.
    try {
      cuda::DeviceGuard guard(device_);
      for (auto& e : events_)
        cuda::logIfFailed(cudaEventSynchronize(e.get()), "cudaEventSynchronize(slot event)");
      cuda::logIfFailed(cudaStreamSynchronize(stream_.get()), "cudaStreamSynchronize(share copy stream)");
    } catch (const std::exception& e) {
      log::error("share '", name_, "': ", e.what());
    }
    // Members go in reverse order: events, stream, then the memory.
  }

  int device() const noexcept override { return device_; }
  std::uint8_t* base() const noexcept override { return base_; }
  void* slotEvent(std::uint32_t slot) const noexcept override {
    return slot < events_.size() ? events_[slot].get() : nullptr;
  }
  Transport transport() const noexcept override { return info_.transport; }
  std::vector<std::uint8_t> slotsMessage() const override { return encodeDeviceSlots(info_); }
  std::vector<int> slotsMessageFds() const override {
    return info_.transport == Transport::kCudaVmmFd ? std::vector<int>{vmm_.fd()} : std::vector<int>{};
  }
  std::vector<std::uint8_t> eventsMessage() const override { return encodeDeviceEvents(eventHandles_); }
  bool grantAccess(int device, std::string& why) override {
    return info_.transport == Transport::kCudaVmmFd ? vmm_.grantAccess(device, why)
                                                    : enablePeerAccess(device, device_, why);
  }

  void markWritten(std::uint32_t slot, void* stream, void* readyEvent) override {
    cuda::DeviceGuard guard(device_);
    cudaStream_t s = static_cast<cudaStream_t>(stream);
    if (!s) {
      if (!readyEvent)
        throw Error(Errc::kInvalidArgument, "share '" + name_ + "': nothing orders the slot's write");
      s = stream_.get();
      cuda::check(cudaStreamWaitEvent(s, static_cast<cudaEvent_t>(readyEvent), 0),
                  "cudaStreamWaitEvent(frame ready)");
    }
    cuda::check(cudaEventRecord(events_.at(slot).get(), s), "cudaEventRecord(slot event)");
  }

  void copyIn(std::uint32_t slot, const Frame& dst, const Frame& src, const ImageLayout& layout,
              void* stream) override {
    cuda::DeviceGuard guard(device_);
    cudaStream_t s = stream ? static_cast<cudaStream_t>(stream) : stream_.get();
    if (src.gpu.readyEvent) {
      cuda::check(cudaStreamWaitEvent(s, static_cast<cudaEvent_t>(src.gpu.readyEvent), 0),
                  "cudaStreamWaitEvent(frame ready)");
    }
    for (std::uint32_t i = 0; i < layout.planeCount; ++i) {
      const auto& p = layout.planes[i];
      cuda::check(cudaMemcpy2DAsync(dst.data[i], dst.pitch[i], src.data[i], src.pitch[i], p.widthBytes,
                                    p.rows, cudaMemcpyDefault, s),
                  "cudaMemcpy2DAsync(into share slot)", "plane " + std::to_string(i));
    }
    cuda::check(cudaEventRecord(events_.at(slot).get(), s), "cudaEventRecord(slot event)");
    // Our own stream: the caller cannot order anything after it, so the source is free only now.
    if (!stream) cuda::check(cudaStreamSynchronize(s), "cudaStreamSynchronize(share copy)");
  }

 private:
  std::string name_;
  int device_;
  std::uint64_t stride_;
  std::uint32_t slots_;
  DeviceBuffer legacy_;  // kCudaIpcLegacy
  VmmExport vmm_;        // kCudaVmmFd
  std::uint8_t* base_ = nullptr;
  CudaStream stream_;
  std::vector<InterprocessEvent> events_;
  DeviceSlotsInfo info_;
  DeviceEventsInfo eventHandles_;
};

class CudaImport final : public DeviceImport {
 public:
  CudaImport(const std::string& name, const DeviceSlotsInfo& slots, const DeviceEventsInfo& events,
             std::vector<UniqueFd> fds)
      : stride_(slots.slotStride) {
    const cudaError_t st = cudaDeviceGetByPCIBusId(&device_, slots.pciBusId.c_str());
    if (st != cudaSuccess) {
      (void)cudaGetLastError();
      throw Error(
          st == cudaErrorNoDevice || st == cudaErrorInsufficientDriver ? Errc::kUnavailable : Errc::kNotFound,
          "publisher '" + name + "' shares device memory of GPU " + slots.pciBusId +
              ", which this process cannot use (" + cuda::errorText("cudaDeviceGetByPCIBusId", st) +
              "; CUDA_VISIBLE_DEVICES?)");
    }
    if (slots.transport == Transport::kCudaVmmFd) {
      if (fds.size() != 1)
        throw Error(Errc::kProtocol, "publisher '" + name + "': VMM slots without their fd");
      vmm_ = VmmImport(device_, fds[0].get(), slots.allocationBytes);
      base_ = vmm_.data();
      vmmMapped_ = true;
    } else {
      legacy_ = IpcMemoryMapping(device_, slots.memHandle);
      base_ = static_cast<std::uint8_t*>(legacy_.get());
    }
    events_.reserve(events.events.size());
    for (const auto& h : events.events) events_.emplace_back(device_, h);
  }
  // Members go in reverse order: opened events, then the mapping (VMM or legacy).

  int device() const noexcept override { return device_; }
  std::uint8_t* base() const noexcept override { return base_; }
  std::uint64_t slotStride() const noexcept override { return stride_; }
  void* slotEvent(std::uint32_t slot) const noexcept override {
    return slot < events_.size() ? events_[slot].get() : nullptr;
  }
  bool grantAccess(int device, std::string& why) override {
    return vmmMapped_ ? vmm_.grantAccess(device, why) : enablePeerAccess(device, device_, why);
  }

 private:
  bool vmmMapped_ = false;
  int device_ = -1;
  std::uint64_t stride_;
  IpcMemoryMapping legacy_;
  VmmImport vmm_;
  std::uint8_t* base_ = nullptr;
  std::vector<ImportedEvent> events_;
};

class CudaIpcTransport final : public DeviceTransport {
 public:
  std::unique_ptr<DeviceSlots> createSlots(const std::string& shareName, int device, std::uint64_t slotStride,
                                           std::uint32_t slots, ShareOptions::DeviceExport how) override {
    return std::make_unique<CudaSlots>(shareName, device, slotStride, slots, how);
  }
  std::unique_ptr<DeviceImport> importSlots(const std::string& shareName, const DeviceSlotsInfo& slots,
                                            const DeviceEventsInfo& events,
                                            std::vector<UniqueFd> fds) override {
    return std::make_unique<CudaImport>(shareName, slots, events, std::move(fds));
  }
  std::unique_ptr<DeviceImport> forReader(std::unique_ptr<DeviceImport> import, const ReaderDevice& reader,
                                          const std::string& shareName) override {
    return adaptForReader(std::move(import), reader, shareName);
  }
  void synchronizeEvent(void* event, int device) override {
    const cuda::DeviceGuard guard(device);
    cuda::check(cudaEventSynchronize(static_cast<cudaEvent_t>(event)), "cudaEventSynchronize",
                "the frame's ready event (SharedFrame::waitReady)");
  }
  void copyToHost(void* dst, const void* src, std::size_t bytes, void* event, int device) override {
    const cuda::DeviceGuard guard(device);
    if (event != nullptr)
      cuda::check(cudaEventSynchronize(static_cast<cudaEvent_t>(event)), "cudaEventSynchronize",
                  "the frame's ready event (SharedFrame::copyToHost)");
    cuda::check(cudaMemcpy(dst, src, bytes, cudaMemcpyDeviceToHost), "cudaMemcpy", "device frame to host (SharedFrame::copyToHost)");
  }
  std::shared_ptr<void> importSemaphore(int fd, bool timeline, int device) override {
    return std::make_shared<CudaSemaphore>(fd, timeline, device);
  }
  void signalSemaphore(void* semaphore, bool timeline, std::uint64_t value, void* event,
                       int device) override {
    (void)timeline, (void)device;  // both fixed at the import
    static_cast<CudaSemaphore*>(semaphore)->signalAfter(event, value);
  }
  void signalSemaphoreOnStream(void* semaphore, std::uint64_t value, void* stream) override {
    static_cast<CudaSemaphore*>(semaphore)->signalOn(stream, value);
  }
};

struct Registrar {
  Registrar() {
    static CudaIpcTransport transport;
    registerDeviceTransport(&transport);
  }
};
const Registrar gRegistrar;

}  // namespace
}  // namespace zerohop::share_detail

/// Referenced by the link option of zerohop::share_cuda so this object file (and its registrar)
/// is linked into every program that links the library.
extern "C" void zerohop_share_cuda_anchor() {}
