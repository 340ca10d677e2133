#include "share/reader_session.hpp"

#include <linux/futex.h>
#include <sys/syscall.h>
#include <time.h>
#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <mutex>

#include "share/in_process_slots.hpp"
#include "share/unix_socket.hpp"
#include "share/wire.hpp"
#include "share/wire_codes.hpp"
#include "zerohop/clock.hpp"
#include "zerohop/error.hpp"
#include "zerohop/log.hpp"

namespace zerohop::share_detail {
namespace {

[[noreturn]] void protocolError(const std::string& name, const std::string& what) {
  throw Error(Errc::kProtocol, "publisher '" + name + "': " + what);
}

}  // namespace

UniqueFd ReaderSession::dial(const std::string& name, const std::string& socketPath, bool& stale) {
  int err = 0;
  UniqueFd fd = tryConnectSeqpacket(socketPath, err);
  stale = false;
  if (fd) return fd;
  // Chosen by the errno, never by its text (strerror is translated under other locales).
  if (err == ECONNREFUSED) {  // a socket file nobody listens on
    stale = true;
    return fd;
  }
  if (errcFromErrno(err) == Errc::kNotFound) return fd;  // no socket file (ENOENT)
  const std::string why =
      "connect(" + socketPath + ") failed: " + std::strerror(err) + " (errno " + std::to_string(err) + ")";
  const Errc code = errcFromErrno(err);
  throw Error(code == Errc::kIo ? Errc::kUnavailable : code, "cannot reach publisher '" + name + "': " + why);
}

Error ReaderSession::absent(const std::string& name, const std::string& socketPath, bool stale) {
  if (stale) {
    return Error(Errc::kUnavailable, "publisher '" + name + "' went away (stale socket " + socketPath +
                                         ": its process ended without closing the share); it is read again " +
                                         "once a publisher of that name is back: reconnect then, or open " +
                                         "with a timeout to wait for it");
  }
  return Error(Errc::kNotFound, "no publisher '" + name + "' (no socket " + socketPath + ")");
}

Error ReaderSession::wentAway(const std::string& name) {
  return Error(Errc::kUnavailable, "publisher '" + name +
                                       "' went away: reconnect to read it again once it is back (frames "
                                       "still held stay readable)");
}

std::shared_ptr<ReaderSession> ReaderSession::connect(const std::string& name, const std::string& socketPath,
                                                      const SubscribeOptions& options,
                                                      std::shared_ptr<ReaderCounters> counters) {
  bool stale = false;
  UniqueFd socket = dial(name, socketPath, stale);
  if (!socket) throw absent(name, socketPath, stale);
  return handshake(name, socketPath, std::move(socket), options, std::move(counters));
}

std::shared_ptr<ReaderSession> ReaderSession::handshake(const std::string& name, const std::string& socketPath,
                                                        UniqueFd socket, const SubscribeOptions& options,
                                                        std::shared_ptr<ReaderCounters> counters) {
  std::shared_ptr<ReaderSession> s(new ReaderSession());
  s->name_ = name;
  s->counters_ = std::move(counters);
  s->socket_ = std::move(socket);
  // The publisher must be who we expect: our own uid unless told otherwise.
  const PeerCredentials cred = peerCredentials(s->socket_.get());
  const uid_t expected = options.publisherUid ? *options.publisherUid : ::geteuid();
  if (cred.uid != expected) {
    throw Error(Errc::kUnavailable, "socket " + socketPath + " is served by uid " + std::to_string(cred.uid) +
                                        " (pid " + std::to_string(cred.pid) + "), expected uid " +
                                        std::to_string(expected) + ": refusing to subscribe");
  }

  Hello hello;
  hello.pid = ::getpid();
  // Offer device memory only when the CUDA transport is linked in; a device publisher refuses us
  // otherwise, with a message that says so.
  if (deviceTransport()) hello.acceptMemory |= kAcceptDevice;
  try {
    sendMessage(s->socket_.get(), encodeHello(hello));
  } catch (const Error&) {
    // The publisher may have refused us at accept (uid check) and closed already: its Reject is
    // still queued for us and says why, so fall through and read it.
  }
  std::optional<ReceivedMessage> msg;
  try {
    msg = receiveMessage(s->socket_.get(), options.handshakeTimeout);
  } catch (const Error& e) {
    if (e.code() == Errc::kTimeout)
      throw Error(Errc::kTimeout, "publisher '" + name + "' did not answer the handshake: " + e.what());
    throw;
  }
  if (!msg)
    throw Error(Errc::kUnavailable, "publisher '" + name + "' closed the connection during the handshake");
  const MessageHeader h = decodeHeader(msg->bytes);
  // A Reject has the same layout in every protocol version, so it is understood whatever the version.
  if (h.type == MessageType::kReject) {
    const Reject r = decodeReject(msg->bytes);
    throw Error(r.code, "publisher '" + name + "' refused the subscription: " + r.reason);
  }
  if (h.version != kProtocolVersion) {
    protocolError(name, "speaks share protocol v" + std::to_string(h.version) + ", this subscriber speaks v" +
                            std::to_string(kProtocolVersion) + ": rebuild against the same zerohop");
  }
  const Welcome w = decodeWelcome(msg->bytes);
  const bool onDevice = isDeviceTransport(w.transport);
  if (!onDevice && w.transport != Transport::kHostMemfd) {
    protocolError(name, "offers unknown transport " + std::to_string(static_cast<unsigned>(w.transport)));
  }
  if (onDevice && !deviceTransport()) {
    throw Error(Errc::kUnsupported,
                "this reader was built without CUDA; publisher '" + name + "' shares device memory");
  }
  const std::size_t fdsExpected = onDevice ? 2 : 3;
  if (w.fdCount != fdsExpected || msg->fds.size() != fdsExpected) {
    protocolError(name, "Welcome carried " + std::to_string(msg->fds.size()) + " descriptors, expected " +
                            std::to_string(fdsExpected));
  }
  const int controlFd = msg->fds[0].get();
  const int slotsFd = onDevice ? -1 : msg->fds[1].get();
  const int leaseFd = msg->fds[fdsExpected - 1].get();
  if (w.leaseEntries != kLeaseEntries || w.leaseBytes < sizeof(LeasePage))
    protocolError(name, "unexpected lease page geometry");
  // Never map beyond a file's end (SIGBUS): the sizes must match what the files really are.
  if (fileSize(controlFd) < w.controlBytes || (!onDevice && fileSize(slotsFd) < w.slotBytes) ||
      fileSize(leaseFd) < w.leaseBytes || w.controlBytes < controlBlockBytes(1)) {
    protocolError(name, "Welcome announces more shared memory than its descriptors hold");
  }
  DeviceSlotsInfo deviceSlots;
  DeviceEventsInfo deviceEvents;
  std::vector<UniqueFd> deviceFds;  // kCudaVmmFd: the allocation's fd
  if (onDevice) {
    // Device transports: the slot and event handles follow in two messages of their own.
    for (const MessageType want : {MessageType::kDeviceSlots, MessageType::kDeviceEvents}) {
      auto m = receiveMessage(s->socket_.get(), options.handshakeTimeout);
      if (!m)
        throw Error(Errc::kUnavailable,
                    "publisher '" + name + "' closed the connection during the handshake");
      if (want == MessageType::kDeviceSlots) {
        deviceSlots = decodeDeviceSlots(m->bytes);
        // The Welcome and the DeviceSlots message must agree; VMM brings exactly its one fd.
        const std::size_t fds = deviceSlots.transport == Transport::kCudaVmmFd ? 1 : 0;
        if (deviceSlots.transport != w.transport || m->fds.size() != fds) {
          protocolError(name, "DeviceSlots (transport " +
                                  std::to_string(static_cast<unsigned>(deviceSlots.transport)) + ", " +
                                  std::to_string(m->fds.size()) + " descriptors) disagrees with the Welcome");
        }
        deviceFds = std::move(m->fds);
      } else {
        if (!m->fds.empty()) protocolError(name, "DeviceEvents must not carry descriptors");
        deviceEvents = decodeDeviceEvents(m->bytes);
      }
    }
  }
  s->control_ = MappedRegion::map(controlFd, w.controlBytes, false, "share control block");
  s->header_ = reinterpret_cast<const ControlHeader*>(s->control_.data());
  const RingGeometry& g = s->header_->geometry;
  if (g.magic != kControlMagic || g.version != kProtocolVersion)
    protocolError(name, "control block has a bad magic or version");
  if (g.slotCount == 0 || g.slotCount > kMaxSlots || controlBlockBytes(g.slotCount) > w.controlBytes ||
      g.slotCapacity == 0 || g.slotCapacity > g.slotStride || g.slotStride * g.slotCount > w.slotBytes ||
      g.planeCount == 0 || g.planeCount > kMaxPlanes) {
    protocolError(name, "control block geometry is inconsistent");
  }
  for (std::uint32_t i = 0; i < g.planeCount; ++i) {
    if (std::uint64_t{g.planeOffset[i]} + std::uint64_t{g.planePitch[i]} * g.planeRows[i] > g.slotCapacity) {
      protocolError(name, "control block plane layout exceeds the slot");
    }
  }
  if (onDevice) {
    if (g.memory != kWireMemoryDevice ||
        g.mode != static_cast<std::uint32_t>(RingMode::kImage) || deviceSlots.slotCount != g.slotCount ||
        deviceSlots.slotStride != g.slotStride || deviceEvents.events.size() != g.slotCount) {
      protocolError(name, "device slot and event handles disagree with the control block");
    }
    const ReaderDevice reader{options.device,
                              options.deviceAccess == SubscribeOptions::DeviceAccess::kCopy};
    if (g.producerPid == ::getpid()) {
      // A reader in the publisher's own process: its device pointers and events, used directly.
      auto import = importInProcess(g.sessionId, g.slotStride);
      if (!import) {
        throw Error(Errc::kUnavailable, "publisher '" + name + "' of this process is closing");
      }
      s->ringDevice_ = import->device();
      s->device_ = deviceTransport()->forReader(std::move(import), reader, name);
      s->inProcess_ = true;
      log::debug("share '", name, "': in-process reader: the publisher's device pointers, no IPC handles");
    } else {
      if (deviceSlots.transport == Transport::kCudaVmmFd) {
        // The import below closes the fd it is given: keep our own for renderers (Vulkan, GL).
        const int kept = ::fcntl(deviceFds.at(0).get(), F_DUPFD_CLOEXEC, 0);
        if (kept < 0) {
          throw Error(Errc::kIo, std::string("fcntl(F_DUPFD_CLOEXEC) of share '") + name +
                                           "' ring memory fd: " + std::strerror(errno) +
                                           " (raise the open-files limit, ulimit -n)");
        }
        s->ringMemoryFd_ = UniqueFd(kept);
        s->ringMemoryBytes_ = deviceSlots.allocationBytes;
        s->slotStride_ = deviceSlots.slotStride;
      }
      auto import = deviceTransport()->importSlots(name, deviceSlots, deviceEvents, std::move(deviceFds));
      s->ringDevice_ = import->device();
      s->device_ = deviceTransport()->forReader(std::move(import), reader, name);
      // The reader's first line says what a hand-off costs here and how to make it cheap (once per process).
      static std::once_flag noted;
      std::call_once(noted, [&] {
        const MpsStatus mps = detectMps();
        const std::string line = "share '" + name + "': device frames via " +
                                 (deviceSlots.transport == Transport::kCudaVmmFd ? "CUDA VMM file descriptors"
                                                                                 : "legacy CUDA IPC") +
                                 "; " + mpsHandoffNote(mps);
        if (mps.active) {
          log::info(line);
        } else {
          log::warn(line);
        }
      });
    }
  } else {
    s->slots_ = MappedRegion::map(slotsFd, w.slotBytes, false, "share slots");
  }
  s->lease_ = MappedRegion::map(leaseFd, w.leaseBytes, true, "share lease page");
  s->slotHeaders_ = slotHeaders(s->control_.data());
  s->leasePage_ = reinterpret_cast<LeasePage*>(s->lease_.data());
  if (s->leasePage_->magic != kLeaseMagic) protocolError(name, "lease page has a bad magic");

  ShareInfo& info = s->info_;
  info.name = name;
  info.socketPath = socketPath;
  const auto format = formatFromWire(g.format);
  const auto memory = memoryFromWire(g.memory);
  if (!format || !memory) {
    protocolError(name, "control block names pixel format " + std::to_string(g.format) + " and memory " +
                            std::to_string(g.memory) + ", not both codes of share protocol v" +
                            std::to_string(kProtocolVersion));
  }
  info.layout.format = *format;
  info.layout.width = g.width;
  info.layout.height = g.height;
  info.layout.planeCount = g.planeCount;
  for (std::uint32_t i = 0; i < kMaxPlanes; ++i) {
    info.layout.planes[i] =
        PlaneLayout{g.planeOffset[i], g.planePitch[i], g.planeRows[i], g.planeWidthBytes[i]};
  }
  info.layout.totalBytes = g.slotCapacity;
  info.encoded = g.mode == static_cast<std::uint32_t>(RingMode::kEncoded);
  info.slots = g.slotCount;
  info.slotCapacity = g.slotCapacity;
  info.memory = *memory;
  info.publisherPid = g.producerPid;
  info.sessionId = g.sessionId;
  info.inProcess = s->inProcess_;
  info.transport = w.transport == Transport::kCudaVmmFd       ? "cuda-vmm-fd"
                   : w.transport == Transport::kCudaIpcLegacy ? "cuda-ipc-legacy"
                                                              : "host-memfd";
  if (s->device_) {
    const ReaderAccess access = s->device_->access();
    info.ringDevice = s->ringDevice_;
    info.readerDevice = s->device_->device();
    info.deviceAccess = access.mode;
    info.deviceAccessReason = access.reason;
    // The subscription's first line says how its GPU reads the ring: a copy is never silent.
    if (access.mode != "same-gpu") log::info("share '", name, "': ", access.mode, ": ", access.reason);
  }
  // An encoded ring describes no picture (each unit carries its own size): the newest unit's, if any.
  if (info.encoded && info.layout.width == 0) {
    if (const auto l = s->latest()) {
      if (const auto snap = readRecord(s->slotHeaders_[l->second])) {
        info.layout.width = snap->record.width;
        info.layout.height = snap->record.height;
      }
    }
  }
  log::debug("share '", name, "': subscribed as reader ", w.readerId, " (", g.slotCount,
             " slots, publisher pid ", g.producerPid, ")");
  return s;
}

std::optional<DeviceRingMemory> ReaderSession::deviceMemory(std::uint32_t slot) const noexcept {
  if (!ringMemoryFd_ || slot >= info_.slots) return std::nullopt;
  return DeviceRingMemory{ringMemoryFd_.get(), ringMemoryBytes_, slotStride_, std::uint64_t{slot} * slotStride_,
                          ringDevice_, info_.sessionId};
}

void ReaderSession::releaseSlot(std::uint32_t entry) noexcept {
  if (entry < kLeaseEntries) leasePage_->entry[entry].store(0, std::memory_order_release);
}

std::optional<std::uint32_t> ReaderSession::claimLease(std::uint32_t slot) noexcept {
  const std::uint64_t value = packLease(slot, monotonicNs() / 1'000'000);
  for (std::uint32_t e = 0; e < kLeaseEntries; ++e) {
    std::uint64_t expected = 0;
    // seq_cst: the publisher's scan must see the lease before we trust the slot's sequence.
    if (leasePage_->entry[e].compare_exchange_strong(expected, value, std::memory_order_seq_cst)) {
      leasePage_->reads.fetch_add(1, std::memory_order_relaxed);  // we are reading (not idle)
      return e;
    }
  }
  return std::nullopt;
}

void ReaderSession::enableNotify(int eventFd, std::chrono::milliseconds timeout) {
  request(MessageType::kNotify, MessageType::kNotifyOk, eventFd, timeout, "frame notifications");
}

void ReaderSession::enableSignal(int semaphoreFd, std::chrono::milliseconds timeout) {
  request(MessageType::kSignal, MessageType::kSignalOk, semaphoreFd, timeout, "its semaphore signalled");
}

std::optional<UpcomingFrame> ReaderSession::upcoming() const noexcept {
  const std::uint64_t packed = header_->upcoming.load(std::memory_order_acquire);
  if (packed == 0 || latestSlot(packed) >= info_.slots) return std::nullopt;
  UpcomingFrame u;
  u.publishIndex = latestIndex(packed);
  u.slot = latestSlot(packed);
  u.slotOffset = slotStride_ * u.slot;
  return u;
}

void ReaderSession::request(MessageType type, MessageType ok, int fd, std::chrono::milliseconds timeout,
                            const char* what) {
  ensureAlive();
  const auto published = [this] {
    const auto l = latest();
    return l ? l->first : 0;
  };
  const std::uint64_t publishedBefore = published();
  const int fds[] = {fd};
  try {
    sendMessage(socket_.get(), encodeEmpty(type), fds);
  } catch (const Error&) {
    gone_.store(true);  // the publisher closed between our check and the send
    throw wentAway(name_);
  }
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  for (;;) {
    std::optional<ReceivedMessage> msg;
    try {
      const auto left =
          std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
      msg = receiveMessage(socket_.get(), std::max(left, std::chrono::milliseconds(0)));
    } catch (const Error& e) {
      if (e.code() != Errc::kTimeout) throw;
      // Its answer may still come: the next request takes it for this one's, not its own.
      if (owedAnswers_++ == 0) owedOk_ = ok;
      const std::string head = "publisher '" + name_ + "' did not answer the request for " + what +
                               " within " + std::to_string(timeout.count()) + " ms";
      const bool idle = published() == publishedBefore;
      if (answeredKinds_ & kindBit(ok))
        throw Error(Errc::kUnavailable,
                    head +
                        ", though it answered this request before: it is stalled (stopped, "
                        "or its threads blocked" +
                        (idle ? "; it published no frame meanwhile" : "") + "); ask again later");
      throw Error(Errc::kTimeout,
                  head + " (a publisher older than this reader does not support it: update it" +
                      (idle ? "; or it is stalled: it published no frame meanwhile" : "") + ")");
    }
    if (!msg) {
      gone_.store(true);
      throw wentAway(name_);
    }
    const MessageHeader h = decodeHeader(msg->bytes);
    // The publisher answers in order: an earlier request's late answer (its Ok or a Reject) comes before
    // this one's; an answer of this request's own kind means it never answered that one.
    if (owedAnswers_ > 0 && (h.type == owedOk_ || h.type == MessageType::kReject)) {
      --owedAnswers_;
      continue;
    }
    if (h.type == ok) owedAnswers_ = 0;
    answeredKinds_ |= kindBit(ok);
    if (h.type == MessageType::kReject) {
      const Reject r = decodeReject(msg->bytes);
      throw Error(r.code, "publisher '" + name_ + "' refused " + what + ": " + r.reason);
    }
    decodeEmpty(msg->bytes, ok);
    return;
  }
}

bool ReaderSession::gone() const {
  if (gone_.load()) return true;
  if (header_->state.load(std::memory_order_acquire) == static_cast<std::uint32_t>(RingState::kClosed) ||
      peerHungUp(socket_.get())) {
    gone_.store(true);
  }
  return gone_.load();
}

void ReaderSession::ensureAlive() const {
  if (gone()) throw wentAway(name_);
}

std::optional<std::pair<std::uint64_t, std::uint32_t>> ReaderSession::latest() const noexcept {
  const std::uint64_t packed = header_->latest.load(std::memory_order_acquire);
  if (packed == 0 || latestSlot(packed) >= info_.slots) return std::nullopt;
  return std::make_pair(latestIndex(packed), latestSlot(packed));
}

std::optional<std::pair<std::uint64_t, std::uint32_t>> ReaderSession::oldestAfter(
    std::uint64_t after) const noexcept {
  std::optional<std::pair<std::uint64_t, std::uint32_t>> best;
  for (std::uint32_t i = 0; i < info_.slots; ++i) {
    const auto snap = readRecord(slotHeaders_[i]);
    if (!snap || snap->record.publishIndex <= after) continue;
    if (!best || snap->record.publishIndex < best->first) best = std::make_pair(snap->record.publishIndex, i);
  }
  return best;
}

std::optional<SharedFrame> ReaderSession::tryRead(std::uint32_t slot, std::uint64_t minIndex) {
  if (slot >= info_.slots) return std::nullopt;
  const auto entry = claimLease(slot);
  if (!entry) {
    throw Error(Errc::kUnavailable, "share '" + name_ + "': this subscriber already holds " +
                                        std::to_string(kLeaseEntries) + " SharedFrames; release some");
  }
  FrameLease lease;
  Frame f;
  const auto snap = readRecord(slotHeaders_[slot]);
  if (!snap || snap->record.publishIndex == 0 || snap->record.publishIndex < minIndex) {
    releaseSlot(*entry);
    return std::nullopt;
  }
  const SlotRecord& r = snap->record;
  const RingGeometry& g = header_->geometry;
  // Device rings: in place, or (deviceAccess "copy") this reader's copy, made after the slot's write.
  DeviceView view;
  if (device_) view = device_->view(slot, g.slotCapacity);
  std::uint8_t* base =
      device_ ? view.base : const_cast<std::uint8_t*>(slots_.data()) + g.slotStride * slot;  // mapped PROT_READ
  const auto format = formatFromWire(r.format);
  const auto matrix = matrixFromWire(r.matrix);
  const auto range = rangeFromWire(r.range);
  if (!format || !matrix || !range) {  // a record never exposed with numbers the protocol does not define
    releaseSlot(*entry);
    throw Error(Errc::kProtocol, "publisher '" + name_ + "': slot record has pixel format " +
                                     std::to_string(r.format) + ", matrix " + std::to_string(r.matrix) +
                                     ", range " + std::to_string(r.range) + ": not all share protocol codes");
  }
  f.format = *format;
  f.width = r.width;
  f.height = r.height;
  f.color.matrix = *matrix;
  f.color.range = *range;
  f.memory = device_ ? MemoryKind::kDevice : MemoryKind::kHost;
  if (device_) {
    f.gpu.readyEvent = view.readyEvent;
    f.gpu.device = view.device;
  }
  f.planeCount = std::min<std::uint32_t>(r.planeCount, g.planeCount);
  for (std::uint32_t i = 0; i < f.planeCount; ++i) {
    // The record must agree with the validated geometry; a disagreeing record is never exposed.
    if (r.planeOffset[i] != g.planeOffset[i] || r.planePitch[i] != g.planePitch[i]) {
      releaseSlot(*entry);
      throw Error(Errc::kProtocol, "publisher '" + name_ + "': slot record disagrees with the ring layout");
    }
    f.data[i] = base + r.planeOffset[i];
    f.pitch[i] = r.planePitch[i];
  }
  f.bytesUsed = std::min<std::uint64_t>(r.bytesUsed, g.slotCapacity);
  f.capacity = g.slotCapacity;
  f.sequence = r.sequence;
  f.wallClockMs = r.wallClockMs;
  f.keyframe = r.keyframe != 0;
  for (std::size_t i = 0; i < kStageCount; ++i) f.times.ns[i] = r.stageNs[i];

  SharedFrame out;
  out.lease_ = FrameLease(shared_from_this(), *entry, f);
  out.session_ = shared_from_this();
  out.ringSlot_ = slot;
  out.seq_ = snap->seq;
  out.publishIndex_ = r.publishIndex;
  out.publishNs_ = r.publishNs;
  out.copy_ = std::move(view.keep);
  counters_->frames.fetch_add(1, std::memory_order_relaxed);
  return out;
}

std::uint32_t ReaderSession::wakeWord() const noexcept {
  return header_->wakeWord.load(std::memory_order_acquire);
}

bool ReaderSession::spinForPublish(std::uint32_t seen, std::chrono::nanoseconds budget) const noexcept {
  if (budget.count() <= 0) return false;
  const std::int64_t until = monotonicNs() + budget.count();
  do {
    for (int i = 0; i < 64; ++i) {
      if (header_->wakeWord.load(std::memory_order_acquire) != seen) return true;
#if defined(__x86_64__) || defined(__i386__)
      __builtin_ia32_pause();
#endif
    }
  } while (monotonicNs() < until);
  return header_->wakeWord.load(std::memory_order_acquire) != seen;
}

void ReaderSession::waitForPublish(std::uint32_t seen, std::chrono::nanoseconds timeout) const noexcept {
  const std::int64_t ns = std::max<std::int64_t>(timeout.count(), 1000);
  timespec ts{};
  ts.tv_sec = static_cast<time_t>(ns / 1'000'000'000);
  ts.tv_nsec = static_cast<long>(ns % 1'000'000'000);
  // Shared futex on the read-only mapped control block (FUTEX_WAIT only needs read access).
  ::syscall(SYS_futex, reinterpret_cast<const std::uint32_t*>(&header_->wakeWord), FUTEX_WAIT, seen, &ts,
            nullptr, 0);
}

bool ReaderSession::stillValid(std::uint32_t slot, std::uint64_t seq) const noexcept {
  return slot < info_.slots && share_detail::stillValid(slotHeaders_[slot], seq);
}

}  // namespace zerohop::share_detail
