#pragma once
// The part of a Publisher that WriteSlots keep alive: the ring's memfds and mappings, slot
// bookkeeping, the connected readers' lease pages and the server thread that handshakes readers
// and notices when they leave (closing a reader's socket releases all its leases at once).
// Thread-safety: thread-safe; one mutex guards slot bookkeeping and the reader list (publish scans
// lease pages under it); the server thread owns the pending-handshake list alone.

#include <sys/types.h>

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "core/unique_fd.hpp"
#include "share/device_transport.hpp"
#include "share/mapped_region.hpp"
#include "share/ring_layout.hpp"
#include "share/slot_picker.hpp"
#include "zerohop/error.hpp"
#include "zerohop/share.hpp"

namespace zerohop::share_detail {

class PublisherCore : public std::enable_shared_from_this<PublisherCore> {
 public:
  PublisherCore(std::string name, const SlotLayout& layout, ShareOptions options);
  ~PublisherCore();
  PublisherCore(const PublisherCore&) = delete;
  PublisherCore& operator=(const PublisherCore&) = delete;

  /// Starts the server thread (separate from the constructor so a throwing set-up leaves no thread).
  void start();
  /// Marks the ring closed, wakes waiting readers, (device rings) waits up to deviceDrainTimeout
  /// for readers to unmap, stops the server, drops every reader, removes the socket. Idempotent,
  /// never throws.
  void stop() noexcept;

  WriteSlot acquire();
  /// Device rings: records the slot's event (on `stream`, or after meta.gpu.readyEvent) first;
  /// abandons the slot and rethrows when that fails. Then commitRecorded().
  void commit(WriteSlot& slot, const Frame& meta, void* stream);
  /// Publishes a slot whose pixels (and, device rings, slot event) are already in place.
  /// `stream`: the producer's stream that wrote the slot (commit() with one): readers' semaphores are
  /// signalled on it, right after that work; null: after the slot's event, on their own streams.
  void commitRecorded(WriteSlot& slot, const Frame& meta, void* stream = nullptr);
  void abandon(WriteSlot& slot) noexcept;
  /// Counts payload bytes a copying publish moved into a slot (ShareStats::bytesCopied).
  void countCopied(std::uint64_t bytes) noexcept { bytesCopied_.fetch_add(bytes, std::memory_order_relaxed); }

  ShareStats stats() const;
  const std::string& name() const noexcept { return name_; }
  const std::string& socketPath() const noexcept { return socketPath_; }
  const SlotLayout& layout() const noexcept { return layout_; }
  bool encoded() const noexcept { return encoded_; }
  /// The device slots of a device ring; nullptr for host rings.
  DeviceSlots* device() const noexcept { return device_.get(); }

 private:
  struct Pending {
    UniqueFd socket;
    std::int64_t deadlineNs = 0;
  };
  struct Reader {
    UniqueFd socket;
    MappedRegion leasePage;
    std::uint32_t id = 0;
    pid_t pid = 0;
    bool inProcess = false;  // SO_PEERCRED pid is ours: it holds the device slots itself (no drain)
    UniqueFd notify;         // (mutex_) the reader's eventfd from a Notify: +1 on every publish and on close
    // (mutex_) device rings: the reader's timeline semaphore from a Signal (the transport's import),
    // signalled to each publish index after the frame's write; null: none
    std::shared_ptr<void> semaphore;
    // Idle check (mutex_): the lease page's read count as last seen, when it last moved, and how
    // many frames had been published then.
    std::uint64_t readsSeen = 0;
    std::int64_t activeMs = 0;
    std::uint64_t publishesAtActive = 0;
    const LeasePage* leases() const noexcept { return reinterpret_cast<const LeasePage*>(leasePage.data()); }
  };

  void serve() noexcept;
  void acceptClients();
  void reject(UniqueFd& socket, Errc code, const std::string& reason) noexcept;
  /// Reads a pending client's Hello; true when the client is finished with (admitted or dropped).
  bool handleHello(Pending& pending);
  bool peerAllowed(int socketFd, std::string& why) const;
  void wakeReaders() noexcept;
  /// The slot states pickSlot() judges (mutex_ held); counts forged lease stamps when asked.
  std::vector<SlotState> slotStates(std::int64_t nowMs, bool countForged);
  /// Signals each semaphore to `publishIndex` after `slot`'s event (never blocks the host).
  void signalReaders(const std::vector<std::shared_ptr<void>>& semaphores, std::uint64_t publishIndex,
                     std::uint32_t slot, void* stream) noexcept;
  /// A Signal from a reader (server thread): imports its semaphore, answers SignalOk or Reject.
  void readerSignal(Reader& reader, std::vector<UniqueFd>& fds);
  /// A message from a registered reader (server thread): registers a Notify's eventfd; anything
  /// else is drained and ignored. False when the reader hung up.
  bool readerMessage(Reader& reader);
  void drainDeviceReaders() noexcept;
  std::size_t otherProcessReaders() const;  // mutex_ held
  /// Drops readers idle past readerIdleTimeout (server thread); returns when to look again (ms, -1 = never).
  int dropIdleReaders();

  const std::string name_;
  const SlotLayout layout_;
  const ShareOptions options_;
  const bool encoded_;
  std::string socketPath_;
  std::size_t slotStride_ = 0;
  std::uint64_t sessionId_ = 0;

  UniqueFd controlFd_, slotsFd_;
  MappedRegion control_, slots_;         // slots_: host rings only
  // Device rings only; freed in ~PublisherCore after stop(), or later by the last in-process reader.
  std::shared_ptr<DeviceSlots> device_;
  ControlHeader* header_ = nullptr;
  SlotHeader* slotHeaders_ = nullptr;

  UniqueFd listenFd_;
  UniqueFd wakeFd_;  // eventfd: stop() pokes the server thread
  std::thread server_;
  std::atomic<bool> closing_{false};   // stop() ran (idempotency)
  std::atomic<bool> stopping_{false};  // the server thread must exit
  bool socketBound_ = false;
  dev_t socketDev_ = 0;  // identity of the socket file we bound, so stop() never unlinks a successor's
  ino_t socketIno_ = 0;
  std::vector<Pending> pending_;  // server thread only

  mutable std::mutex mutex_;
  std::condition_variable readersLeft_;  // notified when readers_ shrinks (device drain)
  std::vector<std::unique_ptr<Reader>> readers_;
  std::atomic<bool> anyNotify_{false};  // some reader ever sent a Notify: publishes write the eventfds
  std::mutex signalMutex_;              // orders the readers' semaphore signals; taken before mutex_
  std::uint64_t lastSignalled_ = 0;     // (signalMutex_) the last publish index signalled
  std::vector<std::uint64_t> slotIndex_;  // publish index each slot holds (0 = empty)
  std::vector<bool> writing_;
  std::uint64_t lastIndex_ = 0;
  std::uint32_t latestSlot_ = 0;
  std::uint32_t nextReaderId_ = 1;
  std::uint64_t publishes_ = 0, overruns_ = 0, leaseSkips_ = 0, idleDropped_ = 0, futureStamps_ = 0;
  std::atomic<std::uint64_t> rejected_{0};
  std::atomic<std::uint64_t> bytesCopied_{0};
};

}  // namespace zerohop::share_detail
