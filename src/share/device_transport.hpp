#pragma once
// The seam between the share ring (zerohop_share, no CUDA) and its CUDA device-memory transport
// (zerohop_share_cuda, src/share/cuda/). zerohop_share keeps the control block, seqlock, leases and
// every failure rule; a DeviceTransport only says where a device ring's pixels are and how GPU
// ordering travels. zerohop_share_cuda registers its transport at start-up (a static registrar that
// its INTERFACE link option `--undefined=zerohop_share_cuda_anchor` keeps in every program that
// links it); without it deviceTransport() is null: device rings cannot be published and readers
// do not offer device memory in their Hello.
// Thread-safety: the registry is thread-safe; DeviceSlots is thread-safe (publisher calls come under
// its slot bookkeeping, one slot per writer); a DeviceImport is immutable after construction.

#include <unistd.h>

#include <cstdint>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "core/unique_fd.hpp"
#include "share/wire.hpp"
#include "zerohop/error.hpp"
#include "zerohop/frame.hpp"
#include "zerohop/share.hpp"

namespace zerohop::share_detail {

/// Publisher side: a device ring's slots, exported to readers. Destroying it synchronises the
/// slots' last writes, then frees events and memory (callers make sure readers have let go first).
class DeviceSlots {
 public:
  virtual ~DeviceSlots() = default;
  virtual int device() const noexcept = 0;          ///< CUDA ordinal in the publisher's process
  virtual std::uint8_t* base() const noexcept = 0;  ///< device pointer of slot 0
  virtual void* slotEvent(std::uint32_t slot) const noexcept = 0;  ///< cudaEvent_t (for in-process readers)
  /// The two messages that follow a Welcome (DeviceSlots, DeviceEvents), complete with headers.
  virtual std::vector<std::uint8_t> slotsMessage() const = 0;
  virtual std::vector<std::uint8_t> eventsMessage() const = 0;
  /// Descriptors that travel with the DeviceSlots message (SCM_RIGHTS; kCudaVmmFd: the allocation's
  /// fd). Owned by the DeviceSlots; sendmsg duplicates them into the reader.
  virtual std::vector<int> slotsMessageFds() const { return {}; }
  virtual Transport transport() const noexcept = 0;
  /// In-place writes: records `slot`'s interprocess event on `stream` (a cudaStream_t that wrote
  /// the slot); with a null stream, on the transport's own stream after waiting `readyEvent`.
  virtual void markWritten(std::uint32_t slot, void* stream, void* readyEvent) = 0;
  /// Copying publish: 2-D copies of every plane of `src` (device, pinned or host) into `dst` (the
  /// slot, bound to the layout), ordered after src.gpu.readyEvent when set, then records the slot's
  /// event. On `stream` when given (no host synchronisation; the caller's later work on that stream
  /// is ordered after the copy). Without a stream, on the transport's own stream, and the host waits
  /// for that copy so the source may be reused at once.
  virtual void copyIn(std::uint32_t slot, const Frame& dst, const Frame& src, const ImageLayout& layout,
                      void* stream) = 0;
  /// In-process readers on another GPU: makes the slots readable by CUDA device `device` (VMM:
  /// cuMemSetAccess for it too; cudaMalloc'd: cudaDeviceEnablePeerAccess). False with `why` if not.
  virtual bool grantAccess(int device, std::string& why) {
    (void)device;
    why = "this transport cannot map the ring for another GPU";
    return false;
  }
};

/// Where a reader reads one slot: in place, or this reader's copy of it on its own GPU.
struct DeviceView {
  std::uint8_t* base = nullptr;  ///< device pointer of the slot's first byte, valid on `device`
  void* readyEvent = nullptr;    ///< cudaEvent_t recorded after the slot's write (or the copy)
  int device = -1;
  std::shared_ptr<void> keep;  ///< the copy's buffer (null in place): given back when released
};

/// How a reader's GPU reads the ring (ShareInfo::deviceAccess / deviceAccessReason).
struct ReaderAccess {
  std::string mode = "same-gpu";  ///< "same-gpu", "peer" or "copy"
  std::string reason;
};

/// What the reader asked for (SubscribeOptions::device / deviceAccess).
struct ReaderDevice {
  int device = -1;  ///< -1: the ring's
  bool forceCopy = false;
};

/// Reader side: a device ring's slots mapped into this process, and the opened slot events.
/// Destroying it destroys the opened events and closes the IPC mapping.
class DeviceImport {
 public:
  virtual ~DeviceImport() = default;
  virtual int device() const noexcept = 0;          ///< CUDA ordinal in the reader's process
  virtual std::uint8_t* base() const noexcept = 0;  ///< device pointer of slot 0 here
  virtual std::uint64_t slotStride() const noexcept = 0;
  virtual void* slotEvent(std::uint32_t slot) const noexcept = 0;  ///< cudaEvent_t
  /// Where to read `slot` (`bytes` of it): in place unless this import copies.
  virtual DeviceView view(std::uint32_t slot, std::uint64_t bytes) {
    (void)bytes;
    return DeviceView{base() + slotStride() * slot, slotEvent(slot), device(), nullptr};
  }
  /// Makes the slots readable by CUDA device `device` too (peer access); false with `why` when it cannot.
  virtual bool grantAccess(int device, std::string& why) {
    (void)device;
    why = "this transport cannot map the ring for another GPU";
    return false;
  }
  virtual ReaderAccess access() const { return {}; }
};

class DeviceTransport {
 public:
  virtual ~DeviceTransport() = default;
  virtual std::unique_ptr<DeviceSlots> createSlots(const std::string& shareName, int device,
                                                   std::uint64_t slotStride, std::uint32_t slots,
                                                   ShareOptions::DeviceExport how) = 0;
  /// `fds`: the descriptors that came with the DeviceSlots message (closed after the import).
  virtual std::unique_ptr<DeviceImport> importSlots(const std::string& shareName,
                                                    const DeviceSlotsInfo& slots,
                                                    const DeviceEventsInfo& events,
                                                    std::vector<UniqueFd> fds) = 0;
  /// Blocks the calling thread until `event` (a frame's gpu.readyEvent, on `device`) completed:
  /// SharedFrame::waitReady(). The default (transports without CUDA: the fake's events are tokens
  /// whose writes are done at commit) returns at once.
  virtual void synchronizeEvent(void* event, int device) { (void)event, (void)device; }
  /// Copies `bytes` from device pointer `src` (on `device`) to host `dst` once `event` completed:
  /// SharedFrame::copyToHost(). The default (the fake: "device" memory is host-mapped) memcpys.
  virtual void copyToHost(void* dst, const void* src, std::size_t bytes, void* event, int device) {
    (void)event, (void)device;
    std::memcpy(dst, src, bytes);
  }
  /// ReadySemaphore's import of a renderer's semaphore fd (owned from here on: closed on failure) on
  /// `device`; the handle's deleter waits for the signals it queued, then destroys the import.
  /// The default (transports without CUDA) refuses with kUnsupported.
  virtual std::shared_ptr<void> importSemaphore(int fd, bool timeline, int device) {
    (void)timeline, (void)device;
    ::close(fd);
    throw Error(Errc::kUnsupported, "ReadySemaphore: this device transport cannot import a semaphore");
  }
  /// SharedFrame::signalWhenReady: the semaphore (from importSemaphore) is signalled (a timeline one
  /// to `value`) on the GPU once `event` completed; never blocks.
  virtual void signalSemaphore(void* semaphore, bool timeline, std::uint64_t value, void* event, int device) {
    (void)semaphore, (void)timeline, (void)value, (void)event, (void)device;
    throw Error(Errc::kUnsupported,
                "SharedFrame::signalWhenReady: this device transport cannot signal a semaphore");
  }
  /// The publisher's signal of a reader's semaphore (from importSemaphore, on its own device) to
  /// `value`, queued on `stream` (a cudaStream_t of the producer's that wrote the frame: the signal
  /// follows that work with no other stream between). Never blocks. The default (transports without
  /// CUDA) refuses with kUnsupported; callers then use signalSemaphore with the slot's event.
  virtual void signalSemaphoreOnStream(void* semaphore, std::uint64_t value, void* stream) {
    (void)semaphore, (void)value, (void)stream;
    throw Error(Errc::kUnsupported, "this device transport cannot signal on a stream");
  }
  /// Adapts an import (from importSlots, or of this process's own publisher) to the reader's
  /// device: as it is on the ring's GPU; peer access or a copying import on another. The default
  /// (transports without CUDA) reads on the ring's device only.
  virtual std::unique_ptr<DeviceImport> forReader(std::unique_ptr<DeviceImport> import, const ReaderDevice& reader,
                                                  const std::string& shareName) {
    if (reader.forceCopy || (reader.device >= 0 && reader.device != import->device()))
      throw Error(Errc::kUnsupported, "share '" + shareName + "': this device transport reads on the ring's GPU only");
    return import;
  }
};

/// The registered CUDA transport, or nullptr when zerohop::share_cuda is not linked in.
DeviceTransport* deviceTransport() noexcept;
void registerDeviceTransport(DeviceTransport* transport) noexcept;

}  // namespace zerohop::share_detail
