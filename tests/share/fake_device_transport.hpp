#pragma once
// A host-memory stand-in for the CUDA device transport (a fake at the edge, not a test branch in the library), so the
// device-mode protocol (the 2-descriptor Welcome, the DeviceSlots/DeviceEvents messages, the
// reader's device session, the publisher's drain before freeing, the refusals) runs in CI without
// a GPU. "Device memory" is a memfd the publisher maps read-write; the 64-byte "IPC handle" names
// it as /proc/<publisher pid>/fd/<fd>, which a reader of the same uid opens read-only; with
// ShareOptions::DeviceExport::kVmmFd the memfd itself travels with the DeviceSlots message
// (SCM_RIGHTS), as a CUDA VMM fd does. Events are tokens (never dereferenced). Thread-safety: like the real
// transport.

#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstring>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "share/device_transport.hpp"
#include "share/unix_socket.hpp"
#include "zerohop/error.hpp"

namespace zerohop::share_test {

class FakeDeviceTransport final : public share_detail::DeviceTransport {
 public:
  std::atomic<int> slotsAlive{0};  ///< FakeSlots objects not yet destroyed (publisher side)
  std::atomic<std::uint8_t*> lastSlotsBase{nullptr};  ///< publisher-side base of the newest Slots

  class Slots final : public share_detail::DeviceSlots {
   public:
    Slots(FakeDeviceTransport& owner, std::uint64_t stride, std::uint32_t slots,
          ShareOptions::DeviceExport how)
        : owner_(owner), tokens_(slots) {
      if (how == ShareOptions::DeviceExport::kVmmFd) info_.transport = share_detail::Transport::kCudaVmmFd;
      bytes_ = stride * slots;
      fd_ = share_detail::createSealedMemfd("zerohop-fake-device", bytes_);
      void* p = ::mmap(nullptr, bytes_, PROT_READ | PROT_WRITE, MAP_SHARED, fd_.get(), 0);
      if (p == MAP_FAILED) throwErrno("mmap", errno, "fake device slots");
      base_ = static_cast<std::uint8_t*>(p);
      info_.slotCount = slots;
      info_.allocationBytes = bytes_;
      info_.slotStride = stride;
      info_.pciBusId = "fake";
      const std::int32_t ids[3] = {0x454B4146 /* "FAKE" */, static_cast<std::int32_t>(::getpid()), fd_.get()};
      std::memcpy(info_.memHandle.data(), ids, sizeof ids);
      events_.events.resize(slots);
      for (std::uint32_t i = 0; i < slots; ++i) events_.events[i].fill(static_cast<std::uint8_t>(i));
      ++owner_.slotsAlive;
    }
    ~Slots() override {
      ::munmap(base_, bytes_);
      --owner_.slotsAlive;
    }
    int device() const noexcept override { return 0; }
    std::uint8_t* base() const noexcept override { return base_; }
    void* slotEvent(std::uint32_t slot) const noexcept override {
      return slot < tokens_.size() ? const_cast<int*>(&tokens_[slot]) : nullptr;
    }
    std::vector<std::uint8_t> slotsMessage() const override { return share_detail::encodeDeviceSlots(info_); }
    std::vector<std::uint8_t> eventsMessage() const override {
      return share_detail::encodeDeviceEvents(events_);
    }
    share_detail::Transport transport() const noexcept override { return info_.transport; }
    std::vector<int> slotsMessageFds() const override {
      return info_.transport == share_detail::Transport::kCudaVmmFd ? std::vector<int>{fd_.get()}
                                                                    : std::vector<int>{};
    }
    void markWritten(std::uint32_t, void* stream, void* readyEvent) override {
      if (!stream && !readyEvent)
        throw Error(Errc::kInvalidArgument, "fake: nothing orders the slot's write");
    }
    void copyIn(std::uint32_t, const Frame& dst, const Frame& src, const ImageLayout& l, void*) override {
      for (std::uint32_t p = 0; p < l.planeCount; ++p) {
        for (std::uint32_t r = 0; r < l.planes[p].rows; ++r) {
          std::memcpy(dst.data[p] + std::size_t{r} * dst.pitch[p],
                      src.data[p] + std::size_t{r} * src.pitch[p], l.planes[p].widthBytes);
        }
      }
    }

   private:
    FakeDeviceTransport& owner_;
    std::vector<int> tokens_;
    zerohop::UniqueFd fd_;
    std::uint8_t* base_ = nullptr;
    std::size_t bytes_ = 0;
    share_detail::DeviceSlotsInfo info_;
    share_detail::DeviceEventsInfo events_;
  };

  class Import final : public share_detail::DeviceImport {
   public:
    Import(const share_detail::DeviceSlotsInfo& s, std::size_t events, std::vector<zerohop::UniqueFd> fds)
        : tokens_(events), stride_(s.slotStride) {
      zerohop::UniqueFd fd;
      std::string path = "the DeviceSlots fd";
      if (s.transport == share_detail::Transport::kCudaVmmFd) {
        if (fds.size() != 1) throw Error(Errc::kProtocol, "fake: VMM slots without their fd");
        fd = std::move(fds[0]);
      } else {
        std::int32_t ids[3];
        std::memcpy(ids, s.memHandle.data(), sizeof ids);
        if (ids[0] != 0x454B4146) throw Error(Errc::kProtocol, "fake: not a fake device handle");
        path = "/proc/" + std::to_string(ids[1]) + "/fd/" + std::to_string(ids[2]);
        fd = zerohop::UniqueFd(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
        if (!fd) throwErrno("open", errno, path);
      }
      bytes_ = s.allocationBytes;
      void* p = ::mmap(nullptr, bytes_, PROT_READ, MAP_SHARED, fd.get(), 0);
      if (p == MAP_FAILED) throwErrno("mmap", errno, path);
      base_ = static_cast<std::uint8_t*>(p);
    }
    ~Import() override { ::munmap(base_, bytes_); }
    int device() const noexcept override { return 0; }
    std::uint8_t* base() const noexcept override { return base_; }
    std::uint64_t slotStride() const noexcept override { return stride_; }
    void* slotEvent(std::uint32_t slot) const noexcept override {
      return slot < tokens_.size() ? const_cast<int*>(&tokens_[slot]) : nullptr;
    }

   private:
    std::vector<int> tokens_;
    std::uint64_t stride_;
    std::uint8_t* base_ = nullptr;
    std::size_t bytes_ = 0;
  };

  /// ReadySemaphore: the import keeps the fd; each signal is recorded (nothing waits on it here).
  struct Semaphore {
    zerohop::UniqueFd fd;
    bool timeline;
    int device;
  };
  struct Signal {
    void* semaphore;
    bool timeline;
    std::uint64_t value;
    void* event;  ///< signalSemaphore: after this event
    int device;
    void* stream = nullptr;  ///< signalSemaphoreOnStream: on this stream
  };
  std::atomic<bool> refuseSemaphores{false};  ///< importSemaphore fails as cudaImportExternalSemaphore would
  std::atomic<int> importDelayMs{0};  ///< importSemaphore blocks this long first (a stalled publisher)
  std::atomic<int> importsDone{0};    ///< importSemaphore calls returned or thrown
  std::mutex signalsMutex;
  std::vector<Signal> signals;  ///< every signalSemaphore call, in order

  std::shared_ptr<void> importSemaphore(int fd, bool timeline, int device) override {
    zerohop::UniqueFd owned(fd);
    struct Done {
      std::atomic<int>& n;
      ~Done() { ++n; }
    } done{importsDone};
    const bool refuse = refuseSemaphores;
    if (importDelayMs > 0) std::this_thread::sleep_for(std::chrono::milliseconds(importDelayMs.load()));
    if (refuse) throw Error(Errc::kDevice, "fake: cudaImportExternalSemaphore refused the fd");
    return std::make_shared<Semaphore>(Semaphore{std::move(owned), timeline, device});
  }
  void signalSemaphore(void* semaphore, bool timeline, std::uint64_t value, void* event,
                       int device) override {
    const std::lock_guard lock(signalsMutex);
    signals.push_back(Signal{semaphore, timeline, value, event, device});
  }
  void signalSemaphoreOnStream(void* semaphore, std::uint64_t value, void* stream) override {
    const std::lock_guard lock(signalsMutex);
    signals.push_back(Signal{semaphore, true, value, nullptr, -1, stream});
  }

  std::unique_ptr<share_detail::DeviceSlots> createSlots(const std::string&, int, std::uint64_t stride,
                                                         std::uint32_t slots,
                                                         ShareOptions::DeviceExport how) override {
    auto s = std::make_unique<Slots>(*this, stride, slots, how);
    lastSlotsBase = s->base();
    return s;
  }
  std::unique_ptr<share_detail::DeviceImport> importSlots(const std::string&,
                                                          const share_detail::DeviceSlotsInfo& s,
                                                          const share_detail::DeviceEventsInfo& e,
                                                          std::vector<zerohop::UniqueFd> fds) override {
    return std::make_unique<Import>(s, e.events.size(), std::move(fds));
  }
};

}  // namespace zerohop::share_test
