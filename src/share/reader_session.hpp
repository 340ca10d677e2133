#pragma once
// One handshaken connection of a Subscriber to a publisher: the socket (its closing is how the
// publisher learns we left), the read-only ring mappings and our lease page. SharedFrames keep the
// session alive, so their pointers stay mapped even after the Subscriber reconnected or the
// publisher died. Thread-safety: thread-safe (lease entries are claimed with CAS; counters atomic).

#include <atomic>
#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>

#include "share/device_transport.hpp"
#include "share/mapped_region.hpp"
#include "share/ring_layout.hpp"
#include "core/unique_fd.hpp"
#include "zerohop/error.hpp"
#include "zerohop/share.hpp"

namespace zerohop::share_detail {

/// Counters shared by a Subscriber and every session/frame it produced.
struct ReaderCounters {
  std::atomic<std::uint64_t> frames{0}, overruns{0}, missed{0}, reconnects{0};
};

class ReaderSession final : public SlotOwner, public std::enable_shared_from_this<ReaderSession> {
 public:
  /// Connects to `socketPath`, checks the publisher's uid, handshakes and maps the ring. Throws
  /// absent()'s error when nobody serves the socket.
  static std::shared_ptr<ReaderSession> connect(const std::string& name, const std::string& socketPath,
                                                const SubscribeOptions& options,
                                                std::shared_ptr<ReaderCounters> counters);
  /// connect()'s first step: a socket connected to `socketPath`, or an empty one when nobody serves
  /// it (yet): `stale` then says whether a socket file is there that nobody listens on (its
  /// publisher died without removing it, or a new one is between bind and listen) or none at all.
  /// Throws for any other failure (e.g. a directory we may not enter).
  static UniqueFd dial(const std::string& name, const std::string& socketPath, bool& stale);
  /// The error for a share nobody serves: kNotFound "no publisher 'NAME'", or kUnavailable
  /// "publisher 'NAME' went away (stale socket ...)" when its dead publisher's file is left.
  static Error absent(const std::string& name, const std::string& socketPath, bool stale);
  /// kUnavailable "publisher 'NAME' went away", with how to come back.
  static Error wentAway(const std::string& name);
  /// connect() on a socket dial() connected.
  static std::shared_ptr<ReaderSession> handshake(const std::string& name, const std::string& socketPath,
                                                  UniqueFd socket, const SubscribeOptions& options,
                                                  std::shared_ptr<ReaderCounters> counters);

  /// Asks the publisher to add 1 to `eventFd` (an eventfd) on every publish and on close (a Notify,
  /// answered by NotifyOk within `timeout`). Throws kUnavailable when the publisher went away,
  /// kTimeout without an answer (a publisher that predates Notify ignores it), kProtocol otherwise.
  void enableNotify(int eventFd, std::chrono::milliseconds timeout);
  /// Hands the publisher a timeline semaphore's opaque fd (a Signal, answered by SignalOk within
  /// `timeout`): its GPU signals it to each publish index after that frame's write. The fd is sent
  /// (duplicated into the publisher), not closed here. Throws as enableNotify, or the publisher's
  /// refusal (kUnsupported for a host ring, kDevice when CUDA cannot import it).
  void enableSignal(int semaphoreFd, std::chrono::milliseconds timeout);
  /// The publisher's announced next frame (control block), nullopt when it said none.
  std::optional<UpcomingFrame> upcoming() const noexcept;
  /// The session's socket: hangs up (POLLHUP/POLLRDHUP) when the publisher goes away.
  int socketFd() const noexcept { return socket_.get(); }

  /// Clears lease entry `entry` (SlotOwner: the FrameLease "slot" is the lease-entry index).
  void releaseSlot(std::uint32_t entry) noexcept override;

  /// True once the publisher closed the ring or its socket hung up. Never blocks.
  bool gone() const;
  /// Throws kUnavailable "publisher 'NAME' went away" when gone().
  void ensureAlive() const;

  /// Newest published (publishIndex, slot), or nullopt before the first publish.
  std::optional<std::pair<std::uint64_t, std::uint32_t>> latest() const noexcept;
  /// Leases `slot` and reads it; nullopt (lease dropped) if the slot is empty, being rewritten, or
  /// holds a publish older than `minIndex`.
  std::optional<SharedFrame> tryRead(std::uint32_t slot, std::uint64_t minIndex);
  /// The lowest publishIndex > `after` currently in the ring, with its slot (no lease taken).
  std::optional<std::pair<std::uint64_t, std::uint32_t>> oldestAfter(std::uint64_t after) const noexcept;
  /// Busy-waits (no system call) up to `budget` for the wake word to differ from `seen`; true if it did.
  bool spinForPublish(std::uint32_t seen, std::chrono::nanoseconds budget) const noexcept;
  /// Waits until the ring's wake word differs from `seen` (a publish or close) or `timeout` passes.
  void waitForPublish(std::uint32_t seen, std::chrono::nanoseconds timeout) const noexcept;
  std::uint32_t wakeWord() const noexcept;

  bool stillValid(std::uint32_t slot, std::uint64_t seq) const noexcept;
  const ShareInfo& info() const noexcept { return info_; }
  /// True for a device ring (slots mapped through the CUDA transport).
  bool onDevice() const noexcept { return static_cast<bool>(device_); }
  /// True for a device ring published by this process (its pointers used directly, no IPC).
  bool inProcess() const noexcept { return inProcess_; }
  ReaderCounters& counters() noexcept { return *counters_; }
  /// The ring's CUDA VMM fd (kept for renderers) and `slot`'s offset; nullopt without one.
  std::optional<DeviceRingMemory> deviceMemory(std::uint32_t slot) const noexcept;

 private:
  ReaderSession() = default;
  std::optional<std::uint32_t> claimLease(std::uint32_t slot) noexcept;
  /// Sends `type` with `fd` and waits for `ok` (or a Reject) within `timeout`; `what` names it in errors.
  /// No answer in time: kUnavailable where this publisher answered such a request before (it is
  /// stalled), else kTimeout (a publisher older than this reader ignores it); either way its answer
  /// is owed, and a later request skips it when it comes.
  void request(MessageType type, MessageType ok, int fd, std::chrono::milliseconds timeout, const char* what);

  std::string name_;
  ShareInfo info_;
  UniqueFd socket_;
  MappedRegion control_, slots_, lease_;
  const ControlHeader* header_ = nullptr;
  const SlotHeader* slotHeaders_ = nullptr;
  LeasePage* leasePage_ = nullptr;
  std::shared_ptr<ReaderCounters> counters_;
  mutable std::atomic<bool> gone_{false};
  int owedAnswers_ = 0;                        // requests that timed out; their answers may still come
  MessageType owedOk_ = MessageType::kReject;  // the Ok the oldest of them waits for
  std::uint32_t answeredKinds_ = 0;            // kindBit() of each Ok this publisher has sent
  static constexpr std::uint32_t kindBit(MessageType t) noexcept {
    return 1u << (static_cast<unsigned>(t) & 31u);
  }
  bool inProcess_ = false;
  int ringDevice_ = -1;
  // A dup() of the VMM allocation fd the publisher sent (device rings of another process, kCudaVmmFd),
  // kept for renderers that import the memory themselves (SharedFrame::deviceMemory()).
  UniqueFd ringMemoryFd_;
  std::uint64_t ringMemoryBytes_ = 0;
  std::uint64_t slotStride_ = 0;
  // Declared last so it is destroyed first: the IPC mapping and opened events are closed before
  // the socket, so a draining publisher frees its slots only after we let go (CUDA's rule).
  std::unique_ptr<DeviceImport> device_;
};

}  // namespace zerohop::share_detail
