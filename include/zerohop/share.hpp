#pragma once
// Cross-process frame ring: one process publishes frames (raw images or encoded access units)
// under a NAME; any number of other processes subscribe by NAME and read them in place, with no
// capture and no copy of their own. Full protocol: docs/share-protocol.md.
//
// Transport (protocol version 1):
//   socket   <dir>/NAME.sock, AF_UNIX SOCK_SEQPACKET, dir 0700 + socket 0600 (0710/0660 with a group);
//            <dir> = $XDG_RUNTIME_DIR/zerohop or /tmp/zerohop-<uid>. Both ends check SO_PEERCRED.
//   control  memfd, sealed: geometry + per-slot seqlocked records (sequence, StageTimes, format,
//            pitches, bytesUsed, keyframe, wallClockMs). The publisher writes; readers map read-only.
//   slots    host mode: one memfd, readers map it read-only. Device mode (SlotLayout::memory =
//            kDevice; link zerohop::share_cuda): one allocation for all slots, exported as a CUDA VMM
//            POSIX fd (SCM_RIGHTS) where supported, else with the legacy cudaIpcGetMemHandle
//            (ShareOptions::deviceExport), plus one interprocess CUDA event per slot; fd and handles
//            travel in DeviceSlots/DeviceEvents messages after the Welcome, over the 0600 socket only.
//            A reader in the publisher's own process uses the publisher's device pointers and events
//            directly (ShareInfo::inProcess: no IPC, no GPU context switch).
//   leases   one small memfd per reader that only that reader writes: "I am reading slot S since T".
//
// clang-format off
//   Reader                                      Publisher (thread-safe publish(); a server thread)
//     | connect(NAME.sock) -------------------> | accept; SO_PEERCRED uid == ours (or allowed group)?
//     |                                         |   no: Reject{kUnavailable, "uid N ... may not subscribe"}
//     | SO_PEERCRED: publisher uid expected?    |
//     | Hello{"ZHOP", v1, min..max, host} ----> | magic/version/size ok? no: Reject{kProtocol, why}, close
//     |                                         | register the reader's lease page (watched from now on)
//     | <-- Welcome{transport, sizes, sessionId} + SCM_RIGHTS[control, slots, leasePage]
//     | mmap control + slots RO, lease page RW  |
//     |                                         | publish(): pick a slot (not the latest, not leased,
//     |                                         |   else the oldest); seq odd; copy; record; seq even;
//     |                                         |   latest = slot; futex wake. Never waits for a reader.
//     | latest()/next(): lease entry (slot, t), |
//     |   read the record under the seqlock     |
//     | use pixels; SharedFrame::valid()        |
//     | ~SharedFrame: clear the lease entry     |
//     | close socket (or die, SIGKILL) -------> | POLLHUP: drop the reader's lease page, so all its
//     |                                         |   leases are released at once
//     | <-------------- EOF (exit or death)     | readers' latest()/next() throw kUnavailable
//     |                                         |   "publisher 'NAME' went away"; reconnect() reattaches
// clang-format on
//
// Lifetime: the publisher owns the slots; a SharedFrame keeps the reader's mappings alive (so its
// pointers never dangle, even after the publisher died) and asks the publisher to spare its slot.
// Device rings add the CUDA rule (cudaIpcOpenMemHandle docs): "calling cudaFree on an exported memory
// region before calling cudaIpcCloseMemHandle in the importing context will result in undefined
// behavior", and operations on an imported event after the exporter's cudaEventDestroy are undefined.
// So a closing device publisher marks the ring closed, wakes readers and waits (up to
// ShareOptions::deviceDrainTimeout) until every reader has hung up, and only then synchronises the
// slots' last writes and frees events and memory. A reader that sees its publisher gone drops the
// session (cudaIpcCloseMemHandle, event destroy) as soon as its last SharedFrame is released, then
// closes its socket. A publisher killed by a signal cannot wait: the driver tears its context down;
// readers get kUnavailable on their next call and must stop using frames they still hold.
// A lease protects a slot for ShareOptions::leaseTimeout at most; when every other slot is leased
// the publisher overwrites the oldest anyway and the reader sees it: SharedFrame::valid() turns false
// and the overrun is counted. A torn frame is never reported valid.

#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "zerohop/export.h"
#include "zerohop/encoded_unit.hpp"
#include "zerohop/frame.hpp"
#include "zerohop/pixel_format.hpp"

namespace zerohop {

namespace share_detail {
class PublisherCore;  // opaque: src/share/publisher_core.hpp
class ReaderSession;  // opaque: src/share/reader_session.hpp
}  // namespace share_detail

/// What a ring holds: `slots` images of one layout, or `slots` encoded units of up to `capacity` bytes.
struct ZEROHOP_API SlotLayout {
  ImageLayout image{};  ///< for encoded rings: format kH264 or kOpus, planeCount 1, totalBytes = capacity
  std::uint32_t slots = 0;
  /// kHost: memfd slots (any build). kDevice: slots in GPU memory of CUDA device `device`, shared
  /// as CUDA VMM POSIX fds or legacy CUDA IPC (ShareOptions::deviceExport; needs zerohop::share_cuda
  /// linked; images only; at most 48 slots).
  MemoryKind memory = MemoryKind::kHost;
  int device = 0;

  static SlotLayout images(const ImageLayout& layout, std::uint32_t slots);
  /// Image slots in device memory on CUDA device `device`.
  static SlotLayout deviceImages(const ImageLayout& layout, std::uint32_t slots, int device = 0);
  /// Encoded-unit slots: `format` kH264 (access units) or kOpus (packets).
  static SlotLayout encoded(PixelFormat format, std::size_t capacityBytes, std::uint32_t slots);
  bool isEncoded() const noexcept;
};

struct ShareOptions {
  std::string directory;                         ///< empty = $XDG_RUNTIME_DIR/zerohop or /tmp/zerohop-<uid>
  std::optional<std::uint32_t> allowGroup;       ///< gid whose members may also subscribe (socket 0660)
  std::chrono::milliseconds leaseTimeout{1000};  ///< how long a reader's lease protects its slot
  /// A reader that takes no frame for this long while frames are published is dropped (it held one
  /// of maxReaders for nothing); 0 = never. See docs/share-protocol.md, "Idle readers".
  std::chrono::milliseconds readerIdleTimeout{30000};
  std::uint32_t maxReaders = 32;
  std::chrono::milliseconds handshakeTimeout{2000};  ///< a client that says nothing is dropped
  /// Device rings: how long closing waits for readers to unmap before freeing the slots.
  std::chrono::milliseconds deviceDrainTimeout{2000};
  /// Device rings: how the slots' memory is exported. kAuto: CUDA VMM POSIX file descriptors
  /// (cuMemExportToShareableHandle, sent over the socket with SCM_RIGHTS) where the device and
  /// driver support them, legacy CUDA IPC handles otherwise; the other two force one (kVmmFd on a
  /// device without it: kUnsupported). Readers follow whatever the Welcome says.
  enum class DeviceExport { kAuto, kVmmFd, kLegacyIpc };
  DeviceExport deviceExport = DeviceExport::kAuto;
};

/// Publisher-side counters, for `serve` and tests.
struct ShareStats {
  std::uint32_t readersConnected = 0;
  std::uint32_t leasedSlots = 0;  ///< slots some reader leases right now (live leases)
  std::uint64_t publishes = 0;
  std::uint64_t overruns = 0;         ///< publishes that had to overwrite a leased slot
  std::uint64_t leaseSkips = 0;       ///< publishes that passed over an older, leased slot
  std::uint64_t rejectedClients = 0;  ///< failed handshakes (uid, version, malformed, timeout)
  std::uint64_t idleReadersDropped = 0;  ///< readers dropped after readerIdleTimeout without a read
  std::uint64_t futureLeaseStamps = 0;   ///< lease entries stamped in the future, counted as expired
  /// Payload bytes the publisher copied into slots (publish(); in-place commits copy nothing).
  std::uint64_t bytesCopied = 0;
};

/// A slot handed out for writing in place (acquire -> fill -> Publisher::commit). Dropping it
/// without commit abandons the write (the slot becomes empty). Move-only.
/// Thread-safety: thread-bound while filled; commit from any thread.
class ZEROHOP_API WriteSlot {
 public:
  WriteSlot() = default;
  WriteSlot(WriteSlot&&) noexcept;
  WriteSlot& operator=(WriteSlot&&) noexcept;
  ~WriteSlot();
  /// The slot bound to the ring's layout (data/pitch/capacity); the memory is writable.
  Frame& frame() noexcept { return frame_; }
  std::uint32_t slot() const noexcept { return slot_; }
  explicit operator bool() const noexcept { return static_cast<bool>(core_); }

 private:
  friend class share_detail::PublisherCore;
  std::shared_ptr<share_detail::PublisherCore> core_;
  std::uint32_t slot_ = 0;
  std::uint64_t seqBefore_ = 0;
  Frame frame_{};
};

/// Producer side of a share. Creating it binds NAME; destroying it closes the share (readers get
/// kUnavailable) and removes the socket. Thread-safety: thread-safe (publish from any thread);
/// a server thread inside answers handshakes and notices departed readers.
class ZEROHOP_API Publisher {
 public:
  /// Throws Error: kInvalidArgument (bad name/layout), kUnavailable (NAME already published, unsafe
  /// directory), kIo (a system call failed).
  Publisher(std::string name, const SlotLayout& layout, ShareOptions options = {});
  ~Publisher();
  Publisher(const Publisher&) = delete;
  Publisher& operator=(const Publisher&) = delete;
  Publisher(Publisher&&) noexcept;
  Publisher& operator=(Publisher&&) noexcept;

  /// Copies a frame into the next slot and publishes it. Image rings: format and size must match
  /// the layout (rows are copied with the ring's pitch). Encoded rings: bytesUsed bytes of data[0].
  /// Host rings take host/pinned frames (kUnsupported for device frames). Device rings take any
  /// frame: cudaMemcpy2DAsync per plane on the publisher's own stream, ordered after
  /// frame.gpu.readyEvent when set, then the slot's interprocess event is recorded; the host waits
  /// for that copy (so the source may be reused on return): use the stream overload to avoid the
  /// wait. Never waits for readers. Throws kInvalidArgument on a mismatch or oversized unit,
  /// kDevice when a CUDA call fails.
  void publish(const Frame& frame);
  /// Device rings: the copy and the slot's event go on `cudaStream` (the cudaStream_t that
  /// produced the frame), with no host synchronisation; later work on that stream is ordered after
  /// the copy, so the source may be rewritten by it. Host rings ignore the stream.
  void publish(const Frame& frame, void* cudaStream);
  /// Encoded rings: copies the access unit (bytes, keyframe, sequence, timestamps).
  void publish(const EncodedUnit& unit);

  /// In-place path: a slot to write into (never one a reader leases unless all are), then commit.
  /// Device rings: the slot's Frame holds device pointers (memory kDevice, gpu.device set).
  WriteSlot acquireWrite();
  /// Publishes `slot` with the metadata of `meta` (its data pointers are ignored; bytesUsed is used
  /// for encoded rings). Device rings: `meta.gpu.readyEvent` (a cudaEvent_t recorded after the
  /// write) is required; the publisher's stream waits on it and records the slot's interprocess
  /// event. Throws kInvalidArgument for an empty or foreign WriteSlot, or a device commit without
  /// readyEvent (the slot is then abandoned).
  void commit(WriteSlot&& slot, const Frame& meta);
  /// Device rings: records the slot's interprocess event on `cudaStream` (the cudaStream_t that
  /// wrote the slot; cheapest: no extra wait) and publishes. Host rings ignore the stream.
  void commit(WriteSlot&& slot, const Frame& meta, void* cudaStream);

  ShareStats stats() const;
  const std::string& name() const noexcept;
  const std::string& socketPath() const noexcept;

 private:
  void publishCopy(const Frame& frame, void* cudaStream);
  std::shared_ptr<share_detail::PublisherCore> core_;
};

/// Where a publisher lives and what it publishes, as a reader sees it.
struct ShareInfo {
  std::string name;
  std::string socketPath;
  /// Encoded rings: format is the codec, and width/height the picture size of the newest unit the
  /// reader saw (at subscription, then each one it reads); 0x0 before the first unit.
  ImageLayout layout{};
  bool encoded = false;
  std::uint32_t slots = 0;
  std::size_t slotCapacity = 0;
  MemoryKind memory = MemoryKind::kHost;
  std::int32_t publisherPid = 0;
  std::uint64_t sessionId = 0;  ///< changes when the publisher restarts
  /// A device ring published by this very process: the frames carry the publisher's own device
  /// pointers and slot events (no CUDA IPC, no GPU context switch); same leases and seqlock.
  bool inProcess = false;
  /// How the slots reached this reader: "host-memfd", "cuda-vmm-fd" or "cuda-ipc-legacy".
  std::string transport;
  /// Device rings: the publisher's GPU (ordinal in this process) and the reader's
  /// (SubscribeOptions::device; -1 for host rings).
  int ringDevice = -1;
  int readerDevice = -1;
  /// Device rings: how this reader's GPU reads the slots. "same-gpu" (in place), "peer" (in place,
  /// over NVLink/PCIe peer access: the ring's memory mapped for the reader's GPU too) or "copy"
  /// (one device-to-device copy per frame into a buffer of this reader on its GPU, because the
  /// GPUs cannot peer or SubscribeOptions::deviceAccess asked for it). Empty for host rings.
  std::string deviceAccess;
  std::string deviceAccessReason;  ///< one line: why that mode
};

/// One share of a share directory, as listShares() finds it.
struct ShareListing {
  std::string name;
  std::string socketPath;
  /// A publisher listens on the socket. False: the file of a publisher that died without closing
  /// (SIGKILL); a Subscriber opened with waitForPublisher attaches once a new one replaces it.
  bool live = false;
};
/// The shares in `directory` (empty: this user's default, $XDG_RUNTIME_DIR/zerohop or
/// /tmp/zerohop-<uid>), sorted by name, found without connecting to any (no publisher sees a
/// client): a socket is live when the kernel lists it as listening (/proc/net/unix, this network
/// namespace). A missing directory is an empty list. Throws Error (opendir's errno) when the
/// directory cannot be read. Reentrant.
ZEROHOP_API std::vector<ShareListing> listShares(const std::string& directory = {});

/// Where a device ring's slot lives, for a renderer that imports the ring's memory itself (Vulkan
/// VkImportMemoryFdInfoKHR with VK_EXTERNAL_MEMORY_HANDLE_TYPE_OPAQUE_FD_BIT, once per ring; OpenGL
/// glImportMemoryFdEXT) and binds one buffer per slot at slotOffset. Only rings shared as CUDA VMM
/// POSIX fds by another process have one (SharedFrame::deviceMemory()).
struct DeviceRingMemory {
  /// Borrowed: a dup() of the ring's CUDA VMM allocation fd, owned by the reader's session and closed
  /// when the Subscriber and the last SharedFrame of that session are gone. Valid while this
  /// SharedFrame lives. Vulkan and GL take ownership of an fd they import: pass them a dup() of it.
  int fd = -1;
  std::uint64_t allocationBytes = 0;  ///< the allocation's size (VkMemoryAllocateInfo::allocationSize)
  std::uint64_t slotStride = 0;       ///< bytes from one slot to the next
  std::uint64_t slotOffset = 0;       ///< this frame's slot: slot index x slotStride
  int device = -1;                    ///< the GPU holding it (ShareInfo::ringDevice, ordinal in this process)
  std::uint64_t sessionId = 0;        ///< the ring's publisher session (ShareInfo::sessionId): import once per session
};

/// NVIDIA Multi-Process Service state, as CUDA clients of this user would find it.
struct MpsStatus {
  bool active = false;
  std::string pipeDirectory;  ///< $CUDA_MPS_PIPE_DIRECTORY or /tmp/nvidia-mps
  std::string detail;         ///< one line: what was found
};
/// Reliable and non-intrusive: the daemon's `control` pipe exists in the pipe directory AND an
/// nvidia-cuda-mps-* process is visible in /proc (a stale pipe after kill -9 is not "running").
/// A daemon in another pid namespace reads as not running. Reentrant; never throws.
ZEROHOP_API MpsStatus detectMps();
/// What a device hand-off costs given `mps` and how to start MPS (numbers measured on an H200).
ZEROHOP_API std::string mpsHandoffNote(const MpsStatus& mps);

struct SubscriberStats {
  std::uint64_t frames = 0;    ///< SharedFrames handed out
  std::uint64_t overruns = 0;  ///< reads that found their slot rewritten (retried or reported invalid)
  std::uint64_t missed = 0;    ///< publishes next() skipped because they were already overwritten
  std::uint64_t reconnects = 0;
};

struct SubscribeOptions {
  std::string directory;  ///< empty = the publisher's default directory for this uid
  std::chrono::milliseconds handshakeTimeout{2000};
  /// How long the constructor waits for NAME to be published while nobody serves it: not yet
  /// published (a publisher started after its readers), or its publisher died and left its socket
  /// file (SIGKILL) until a new one replaces it. 0 = fail at once (kNotFound, or kUnavailable for
  /// a dead publisher's socket).
  std::chrono::milliseconds waitForPublisher{0};
  std::optional<std::uint32_t> publisherUid;  ///< empty = must be our own uid
  /// next() first spins this long watching the ring's wake word (no system call), then sleeps in a
  /// futex: a frame published within the spin is picked up in well under a microsecond instead of a
  /// futex wake-up (tens of microseconds; 60-70 us p50 on the H200 VM). 0 = sleep at once.
  std::chrono::microseconds spinBeforeSleep{50};
  /// > 0: next() learns the publisher's frame period and sleeps only until this long before the
  /// next frame is due, then spins until it arrives (at most twice this long), so a steady stream
  /// is picked up without a futex wake-up; costs up to 2x this much CPU per frame. 0 = off.
  std::chrono::microseconds anticipate{0};
  /// Device rings: the CUDA device (ordinal in this process) whose kernels read the frames; -1 = the
  /// ring's own. On another GPU the reader reads in place over peer access where the two GPUs
  /// support it, else each frame is copied once device-to-device into a buffer on this device
  /// (ShareInfo::deviceAccess says which; the first log line of the subscription too).
  int device = -1;
  /// kAuto: in place on the same GPU, peer access to another where it works, else a copy.
  /// kCopy: always the copy into a buffer of this reader (e.g. to keep the reader's kernels off
  /// the link, or to test the fallback on one GPU).
  enum class DeviceAccess { kAuto, kCopy };
  DeviceAccess deviceAccess = DeviceAccess::kAuto;
};

/// A renderer's semaphore imported into CUDA, which SharedFrame::signalWhenReady has the GPU signal
/// once a device frame's write completed: the renderer's queue waits on it, so its thread never
/// blocks on the producer (zerohop/vulkan.hpp's DeviceFrameImporter makes and uses one; a renderer
/// of its own exports a semaphore with vkGetSemaphoreFdKHR, VK_EXTERNAL_SEMAPHORE_HANDLE_TYPE_OPAQUE_FD_BIT).
/// Move-only; owns the CUDA import and the CUDA stream that signals it, and destroys them after the
/// signals it queued have been made. Thread-safety: one thread at a time.
class ZEROHOP_API ReadySemaphore {
 public:
  enum class Kind {
    kTimeline,  ///< a timeline semaphore (Vulkan 1.2 / VK_KHR_timeline_semaphore): signalled to a value
    kBinary,    ///< a binary semaphore: each signal must be waited on once before the next
  };
  ReadySemaphore() = default;
  /// Imports `fd` (an opaque fd of the renderer's semaphore) into CUDA on `device` (a CUDA ordinal
  /// of this process: the frames' frame().gpu.device). Takes ownership of `fd` in every case (CUDA
  /// owns it once imported; closed here otherwise). Throws kUnsupported in a process without
  /// zerohop's CUDA transport, kDevice naming the CUDA call that refused it.
  ReadySemaphore(int fd, Kind kind, int device);
  ReadySemaphore(ReadySemaphore&&) noexcept = default;
  ReadySemaphore& operator=(ReadySemaphore&&) noexcept = default;
  ~ReadySemaphore() = default;
  Kind kind() const noexcept { return kind_; }
  int device() const noexcept { return device_; }
  explicit operator bool() const noexcept { return static_cast<bool>(handle_); }

 private:
  friend class SharedFrame;
  std::shared_ptr<void> handle_;  // the transport's import: destroyed through its deleter
  Kind kind_ = Kind::kTimeline;
  int device_ = -1;
};

/// A read lease on one published frame (move-only). The Frame's pointers are read-only host
/// pointers into the ring; they stay mapped while the SharedFrame lives. Check valid() after using
/// the pixels: false means the publisher overwrote the slot (lease timed out or all slots leased)
/// and what was read may be torn. Thread-safety: thread-bound; may be moved to another thread.
///
/// Device rings: frame().memory is kDevice, data[] are device pointers valid in this process and
/// frame().gpu.readyEvent is the slot's interprocess event (a cudaEvent_t; in-process readers: the
/// publisher's own event and pointers; ShareInfo::deviceAccess "copy": the pointers and event of
/// this reader's copy on its GPU, which the SharedFrame keeps until it is released);
/// frame().gpu.device is the reader's device (ShareInfo::readerDevice): call
/// cudaStreamWaitEvent(yourStream, readyEvent) before launching work on the pixels (no host sync).
/// The lease is a host-side promise: keep the SharedFrame until the GPU work that reads the slot
/// has completed (or accept that only the ring's depth protects it), and call valid() after that
/// work completed to know it read an intact frame.
class ZEROHOP_API SharedFrame {
 public:
  SharedFrame() = default;
  SharedFrame(SharedFrame&&) noexcept = default;
  SharedFrame& operator=(SharedFrame&&) noexcept = default;
  ~SharedFrame() = default;

  const Frame& frame() const noexcept { return lease_.frame(); }
  const Frame* operator->() const noexcept { return &lease_.frame(); }
  /// 1-based count of publishes on this ring (gaps between frames a reader got = frames it missed).
  std::uint64_t publishIndex() const noexcept { return publishIndex_; }
  /// CLOCK_MONOTONIC ns when the publisher committed the frame.
  std::int64_t publishNs() const noexcept { return publishNs_; }
  /// True while the slot still holds this frame; counts an overrun the first time it turns false.
  bool valid() const noexcept;
  /// Device rings shared as CUDA VMM fds by another process: the ring's memory fd and this slot's
  /// offset (DeviceRingMemory). nullopt for host rings, legacy CUDA IPC rings and in-process
  /// readers (their memory has no fd to import). The frame's ready event still orders the read:
  /// wait on frame().gpu.readyEvent (or cudaEventSynchronize it) before the renderer samples.
  std::optional<DeviceRingMemory> deviceMemory() const noexcept;
  /// Device frames: blocks the calling thread until the producer's write of this frame completed
  /// (cudaEventSynchronize on frame().gpu.readyEvent), for consumers that cannot wait on a CUDA
  /// stream (a Vulkan or GL renderer reading deviceMemory()); CUDA consumers use
  /// cudaStreamWaitEvent instead. Host frames: returns at once. Throws kDevice naming the failed call.
  void waitReady() const;
  /// Device frames: has the GPU signal `semaphore` once the producer's write of this frame completed,
  /// without blocking the calling thread (the semaphore's CUDA stream waits on frame().gpu.readyEvent,
  /// then signals: a timeline semaphore to `value`, a binary one once). The renderer's submission
  /// that reads the frame waits on the semaphore (value) instead of the host waiting (waitReady).
  /// Throws kInvalidArgument for a host frame (complete at commit: nothing to wait for), a released
  /// frame, an empty semaphore or one imported on another device than frame().gpu.device;
  /// kUnsupported without zerohop's CUDA transport; kDevice naming the failed CUDA call.
  void signalWhenReady(ReadySemaphore& semaphore, std::uint64_t value) const;
  /// Copies the frame's first `bytes` bytes (from frame().data[0]; at most the slot's capacity) to
  /// host memory `dst`, after the producer's write completed (device frames: cudaEventSynchronize,
  /// then cudaMemcpy). For renderers whose driver refuses to import deviceMemory(). Throws
  /// kInvalidArgument when `bytes` exceeds the capacity, kDevice naming the failed CUDA call.
  void copyToHost(void* dst, std::size_t bytes) const;
  /// Gives the lease back now (idempotent).
  void release() noexcept { lease_.reset(); }
  explicit operator bool() const noexcept { return static_cast<bool>(lease_); }

 private:
  friend class share_detail::ReaderSession;
  FrameLease lease_;  // owner = the reader's session; "slot" = the lease-page entry index
  std::shared_ptr<share_detail::ReaderSession> session_;
  std::uint32_t ringSlot_ = 0;
  std::uint64_t seq_ = 0;
  std::uint64_t publishIndex_ = 0;
  std::int64_t publishNs_ = 0;
  mutable bool overrunCounted_ = false;
  std::shared_ptr<void> copy_;  // deviceAccess "copy": this frame's buffer on the reader's GPU
};

/// A frame the publisher has not written yet: the slot it will write next and the publish index the
/// frame will carry (Subscriber::upcoming()). A renderer whose semaphore the publisher signals
/// (Subscriber::signalOnPublish) submits its read of that slot before the frame exists, waiting on
/// the semaphore reaching publishIndex, and afterwards asks Subscriber::confirm() whether the slot
/// held that frame.
struct UpcomingFrame {
  std::uint64_t publishIndex = 0;  ///< the index it will carry: the value the publisher signals
  std::uint32_t slot = 0;          ///< ring slot
  std::uint64_t slotOffset = 0;    ///< its byte offset in the ring's memory (DeviceRingMemory::slotOffset)
};

/// Reader side of a share. Thread-safety: thread-bound (one thread calls latest/next); the
/// SharedFrames it returns may be released on any thread and may outlive the Subscriber.
/// Device rings: a reader offers device memory in its Hello only when zerohop::share_cuda is
/// linked; one without it is refused with kUnsupported ("this reader was built without CUDA;
/// publisher shares device memory"). Device slots are mapped only when the Welcome says so; the
/// first subscription of a process logs whether MPS runs and what a hand-off costs.
class ZEROHOP_API Subscriber {
 public:
  /// Connects and handshakes, waiting up to options.waitForPublisher for NAME to be served (also
  /// through a dead publisher's socket file until its successor is up). Throws kNotFound (nobody
  /// published NAME by then), kUnavailable (its publisher died and none came back by then; refused,
  /// e.g. wrong uid), kProtocol (version mismatch or foreign peer, with both versions named),
  /// kTimeout (no answer), kInvalidArgument (SubscribeOptions::device names no CUDA device).
  explicit Subscriber(std::string name, SubscribeOptions options = {});
  ~Subscriber();
  Subscriber(const Subscriber&) = delete;
  Subscriber& operator=(const Subscriber&) = delete;
  Subscriber(Subscriber&&) noexcept;
  Subscriber& operator=(Subscriber&&) noexcept;

  /// The newest published frame (possibly one already returned), or nullopt before the first
  /// publish. Throws kUnavailable "publisher 'NAME' went away" once the publisher has gone.
  std::optional<SharedFrame> latest();
  /// The first frame published after the last one this subscriber returned (older ones already
  /// overwritten are counted as missed); waits up to `timeout` (spinning for
  /// SubscribeOptions::spinBeforeSleep, then in a futex), nullopt on timeout. Throws
  /// kUnavailable when the publisher goes away, also while waiting.
  std::optional<SharedFrame> next(std::chrono::milliseconds timeout);
  /// Drops the current session (outstanding SharedFrames stay readable) and handshakes again,
  /// e.g. with a restarted publisher, without waiting. Throws like the constructor.
  void reconnect();
  /// A file descriptor for poll()/select()/epoll (POLLIN), so a reader needs no thread of its own
  /// blocked in next(): it turns readable when a frame may be ready (the publisher signals every
  /// publish) and when the publisher went away or closed the share. Then read without waiting,
  /// next(0ms) (or latest()) until it returns nullopt: each call resets the readiness before it
  /// looks at the ring, so a frame published after that makes the descriptor readable again; a
  /// publisher that went away makes next() throw kUnavailable (reconnect(), as without the fd).
  /// Readable may be spurious (nullopt at once). The first call registers with the publisher (one
  /// round trip, up to SubscribeOptions::handshakeTimeout) and returns a descriptor owned by the
  /// Subscriber: the same one for its whole life, across reconnect(); do not read or close it.
  /// Throws kUnavailable (the publisher went away), kTimeout (it did not answer), kIo.
  int pollFd();
  /// False once the publisher has been seen gone (checked without blocking).
  bool connected() const;

  /// Device rings: hands the publisher `fd`, an opaque fd of a timeline semaphore of the reader's
  /// (Vulkan: vkGetSemaphoreFdKHR, VK_EXTERNAL_SEMAPHORE_HANDLE_TYPE_OPAQUE_FD_BIT), which the
  /// publisher's GPU then signals to each frame's publishIndex() once that frame's write completed,
  /// from the publisher's own CUDA context: a renderer's queue waits for a frame with no CPU and no
  /// other CUDA context between the producer's work and its own (upcoming()). One semaphore per
  /// session: a new one replaces it; after reconnect() (another sessionId, publish indices from 1
  /// again) register a new semaphore. Takes ownership of `fd` (closed once sent). Throws
  /// kUnsupported (a host ring, or a publisher without CUDA), kDevice (the publisher's CUDA could
  /// not import it), kTimeout (no answer within handshakeTimeout: a publisher older than this
  /// reader), kUnavailable (the publisher went away, or it answered this before and is stalled now:
  /// ask again once it publishes; its late answer is skipped, never taken for a later request's).
  void signalOnPublish(int fd);
  /// The frame the publisher will publish next, as it announced when it committed the last one:
  /// nullopt for host rings and before the first publish. The announcement holds unless leases
  /// change before the write; confirm() tells. Never blocks.
  std::optional<UpcomingFrame> upcoming() const;
  /// After the GPU work that read `frame`'s slot (released by the semaphore at its publishIndex) has
  /// completed: that frame, leased, when the slot holds it (then the read saw it whole: it has been
  /// there since its commit); nullopt when the publisher wrote it elsewhere or has overwritten it
  /// since (read it as usual, next()). next() goes on after it, as after a frame it returned.
  /// Never blocks.
  std::optional<SharedFrame> confirm(const UpcomingFrame& frame);

  const ShareInfo& info() const noexcept;
  SubscriberStats stats() const;

 private:
  class Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace zerohop
