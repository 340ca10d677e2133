// PublisherCore: ring set-up (sealed memfds, control block), slot choice, commit/abandon, stop.
// The server thread (handshakes, departed readers) is in publisher_server.cpp.
#include "share/publisher_core.hpp"

#include <linux/futex.h>
#include <poll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <climits>
#include <cstring>
#include <new>
#include <random>

#include "share/in_process_slots.hpp"
#include "share/slot_picker.hpp"
#include "share/unix_socket.hpp"
#include "share/wire.hpp"
#include "share/wire_codes.hpp"
#include "zerohop/clock.hpp"
#include "zerohop/error.hpp"
#include "zerohop/log.hpp"

namespace zerohop::share_detail {
namespace {

constexpr std::size_t kPage = 4096;

std::uint64_t newSessionId() {
  std::random_device rd;
  const std::uint64_t r = (std::uint64_t{rd()} << 32) ^ rd();
  return r ^ static_cast<std::uint64_t>(monotonicNs()) ^ (static_cast<std::uint64_t>(::getpid()) << 40);
}

void validateLayout(const SlotLayout& l) {
  if (l.slots == 0 || l.slots > kMaxSlots) {
    throw Error(Errc::kInvalidArgument, "a share ring needs 1.." + std::to_string(kMaxSlots) +
                                            " slots, got " + std::to_string(l.slots));
  }
  if (l.image.totalBytes == 0) throw Error(Errc::kInvalidArgument, "a share ring slot cannot hold 0 bytes");
  if (l.image.planeCount == 0 || l.image.planeCount > kMaxPlanes) {
    throw Error(Errc::kInvalidArgument,
                "share ring layout has " + std::to_string(l.image.planeCount) + " planes");
  }
  for (std::uint32_t i = 0; i < l.image.planeCount; ++i) {
    const auto& p = l.image.planes[i];
    if (std::size_t{p.offset} + std::size_t{p.pitch} * p.rows > l.image.totalBytes) {
      throw Error(Errc::kInvalidArgument,
                  "share ring layout: plane " + std::to_string(i) + " exceeds totalBytes");
    }
  }
}

}  // namespace

PublisherCore::PublisherCore(std::string name, const SlotLayout& layout, ShareOptions options)
    : name_(std::move(name)), layout_(layout), options_(std::move(options)), encoded_(layout.isEncoded()) {
  validateShareName(name_);
  validateLayout(layout_);
  if (layout_.memory != MemoryKind::kHost && layout_.memory != MemoryKind::kDevice) {
    throw Error(Errc::kInvalidArgument, "share '" + name_ + "': SlotLayout::memory must be kHost or kDevice");
  }
  const bool onDevice = layout_.memory == MemoryKind::kDevice;
  if (onDevice && encoded_) {
    throw Error(Errc::kInvalidArgument, "share '" + name_ + "': device rings hold images only");
  }
  if (onDevice && layout_.slots > kMaxDeviceSlots) {
    throw Error(Errc::kInvalidArgument, "share '" + name_ + "': a device ring holds at most " +
                                            std::to_string(kMaxDeviceSlots) + " slots, got " +
                                            std::to_string(layout_.slots));
  }
  if (onDevice && !deviceTransport()) {
    throw Error(Errc::kUnsupported, "share '" + name_ +
                                        "': device slots need zerohop::share_cuda, which this program does "
                                        "not link (built without CUDA?)");
  }
  const std::string dir = options_.directory.empty() ? defaultShareDirectory() : options_.directory;
  prepareShareDirectory(dir, options_.allowGroup);
  socketPath_ = socketPathFor(dir, name_);
  sessionId_ = newSessionId();
  slotStride_ = (layout_.image.totalBytes + kPage - 1) / kPage * kPage;

  // Control block: geometry first, then the slot headers, all zero (seq 0 = empty, even).
  const std::size_t controlBytes = controlBlockBytes(layout_.slots);
  controlFd_ = createSealedMemfd(("zerohop-ctl-" + name_).c_str(), controlBytes);
  control_ = MappedRegion::map(controlFd_.get(), controlBytes, true, "share control block");
  header_ = new (control_.data()) ControlHeader{};
  RingGeometry& g = header_->geometry;
  g.version = kProtocolVersion;
  g.slotCount = layout_.slots;
  g.mode = static_cast<std::uint32_t>(encoded_ ? RingMode::kEncoded : RingMode::kImage);
  g.memory = memoryToWire(layout_.memory);
  g.producerPid = ::getpid();
  g.slotStride = slotStride_;
  g.slotCapacity = layout_.image.totalBytes;
  g.sessionId = sessionId_;
  g.format = formatToWire(layout_.image.format);
  g.width = layout_.image.width;
  g.height = layout_.image.height;
  g.planeCount = layout_.image.planeCount;
  for (std::uint32_t i = 0; i < kMaxPlanes; ++i) {
    g.planeOffset[i] = layout_.image.planes[i].offset;
    g.planePitch[i] = layout_.image.planes[i].pitch;
    g.planeRows[i] = layout_.image.planes[i].rows;
    g.planeWidthBytes[i] = layout_.image.planes[i].widthBytes;
  }
  g.controlBytes = controlBytes;
  slotHeaders_ = slotHeaders(control_.data());
  for (std::uint32_t i = 0; i < layout_.slots; ++i) new (&slotHeaders_[i]) SlotHeader{};
  header_->state.store(static_cast<std::uint32_t>(RingState::kLive), std::memory_order_release);

  if (onDevice) {
    device_ = deviceTransport()->createSlots(name_, layout_.device, slotStride_, layout_.slots,
                                             options_.deviceExport);
    listInProcess(sessionId_, device_);
  } else {
    slotsFd_ = createSealedMemfd(("zerohop-slots-" + name_).c_str(), slotStride_ * layout_.slots);
    slots_ = MappedRegion::map(slotsFd_.get(), slotStride_ * layout_.slots, true, "share slots");
  }
  // From here on nobody (readers included) can map these writable; our mappings stay valid.
  if (!sealFutureWrites(controlFd_.get()) || (slotsFd_ && !sealFutureWrites(slotsFd_.get()))) {
    log::warn("share '", name_,
              "': F_SEAL_FUTURE_WRITE unsupported (kernel < 5.1); readers could map the ring writable");
  }

  slotIndex_.assign(layout_.slots, 0);
  writing_.assign(layout_.slots, false);

  wakeFd_ = UniqueFd(::eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK));
  if (!wakeFd_) throwErrno("eventfd", errno);
  listenFd_ = listenSeqpacket(socketPath_, options_.allowGroup);
  socketBound_ = true;
  struct stat st {};
  if (::stat(socketPath_.c_str(), &st) == 0) {
    socketDev_ = st.st_dev;
    socketIno_ = st.st_ino;
  }
}

PublisherCore::~PublisherCore() {
  stop();
}

void PublisherCore::start() {
  server_ = std::thread([this] { serve(); });
  log::info("share '", name_, "': publishing ", layout_.slots, " slots of ", layout_.image.totalBytes,
            " bytes (", formatName(layout_.image.format), ", ",
            device_ ? "device memory on CUDA device " + std::to_string(device_->device())
                    : std::string("host memory"),
            ") on ", socketPath_);
}

std::size_t PublisherCore::otherProcessReaders() const {
  return static_cast<std::size_t>(
      std::count_if(readers_.begin(), readers_.end(), [](const auto& r) { return !r->inProcess; }));
}

void PublisherCore::drainDeviceReaders() noexcept {
  // CUDA: freeing exported memory before every importer closed its mapping is undefined behaviour.
  // Readers in this process do not map anything: they hold the slots themselves (in_process_slots).
  std::unique_lock lock(mutex_);
  const std::size_t mapped = otherProcessReaders();
  if (mapped == 0) return;
  if (!readersLeft_.wait_for(lock, options_.deviceDrainTimeout, [&] { return otherProcessReaders() == 0; })) {
    log::warn("share '", name_, "': ", otherProcessReaders(), " of ", mapped,
              " readers still map the device slots after ", options_.deviceDrainTimeout.count(),
              " ms; freeing them anyway (those readers must not touch frames they still hold)");
  }
}

void PublisherCore::stop() noexcept {
  if (closing_.exchange(true)) return;
  if (device_) unlistInProcess(sessionId_);
  if (header_) {
    header_->state.store(static_cast<std::uint32_t>(RingState::kClosed), std::memory_order_release);
    wakeReaders();
  }
  // Device rings: the server thread keeps running (it notices hang-ups) while readers let go.
  if (device_ && server_.joinable()) drainDeviceReaders();
  stopping_.store(true);
  if (server_.joinable()) {
    const std::uint64_t one = 1;
    if (::write(wakeFd_.get(), &one, sizeof(one)) < 0)
      log::warn("share: eventfd write failed: ", std::strerror(errno));
    server_.join();
  }
  {
    std::lock_guard lock(mutex_);
    readers_.clear();  // closes their sockets: readers see EOF
  }
  pending_.clear();
  if (socketBound_) {
    // Remove the socket only if it is still ours (a new publisher may have replaced a stale one).
    struct stat st {};
    if (::stat(socketPath_.c_str(), &st) == 0 && st.st_dev == socketDev_ && st.st_ino == socketIno_) {
      ::unlink(socketPath_.c_str());
    }
    socketBound_ = false;
  }
  listenFd_.reset();
}

void PublisherCore::wakeReaders() noexcept {
  header_->wakeWord.fetch_add(1, std::memory_order_release);
  // Shared (not PRIVATE) futex: readers in other processes wait on the same physical word.
  ::syscall(SYS_futex, reinterpret_cast<std::uint32_t*>(&header_->wakeWord), FUTEX_WAKE, INT_MAX, nullptr,
            nullptr, 0);
  if (!anyNotify_.load(std::memory_order_acquire)) return;
  // Readers that poll: +1 on each one's eventfd (non-blocking; a full counter is readable anyway).
  const std::uint64_t one = 1;
  std::lock_guard lock(mutex_);
  for (const auto& r : readers_) {
    if (r->notify && ::write(r->notify.get(), &one, sizeof(one)) < 0 && errno != EAGAIN)
      log::warn("share '", name_, "': reader ", r->id, "'s eventfd write failed: ", std::strerror(errno));
  }
}

// ---- publishing ------------------------------------------------------------------------------

std::vector<SlotState> PublisherCore::slotStates(std::int64_t nowMs, bool countForged) {
  std::vector<SlotState> states(layout_.slots);
  for (std::uint32_t i = 0; i < layout_.slots; ++i) {
    states[i].publishIndex = slotIndex_[i];
    states[i].writing = writing_[i];
    states[i].latest = lastIndex_ != 0 && i == latestSlot_;
  }
  // Reader lease pages are reader-written: treat every word as untrusted (bounds-check the slot).
  for (const auto& r : readers_) {
    for (std::uint32_t e = 0; e < kLeaseEntries; ++e) {
      const std::uint64_t v = r->leases()->entry[e].load(std::memory_order_seq_cst);
      if (v == 0) continue;
      const std::uint32_t slot = leaseSlot(v);
      if (slot >= layout_.slots) continue;
      if (leaseMs(v) > nowMs + kLeaseClockSlackMs) {  // forged: it would pin the slot for ever
        if (countForged) ++futureStamps_;
        continue;
      }
      states[slot].newestLeaseMs = std::max(states[slot].newestLeaseMs, leaseMs(v));
    }
  }
  return states;
}

WriteSlot PublisherCore::acquire() {
  std::lock_guard lock(mutex_);
  const std::int64_t nowMs = monotonicNs() / 1'000'000;
  const std::vector<SlotState> states = slotStates(nowMs, true);
  const auto choice = pickSlot(states, nowMs, options_.leaseTimeout.count());
  if (!choice)
    throw Error(Errc::kUnavailable,
                "share '" + name_ + "': every slot is being written (too many WriteSlots held)");
  if (choice->overwroteLease) ++overruns_;
  if (choice->skippedLeased) ++leaseSkips_;
  writing_[choice->slot] = true;

  WriteSlot ws;
  ws.core_ = shared_from_this();
  ws.slot_ = choice->slot;
  ws.seqBefore_ = beginWrite(slotHeaders_[choice->slot]);
  if (device_) {
    bindLayout(ws.frame_, layout_.image, device_->base() + slotStride_ * choice->slot, MemoryKind::kDevice);
    ws.frame_.gpu.device = device_->device();
  } else {
    bindLayout(ws.frame_, layout_.image, slots_.data() + slotStride_ * choice->slot, MemoryKind::kHost);
  }
  return ws;
}

void PublisherCore::commit(WriteSlot& ws, const Frame& meta, void* stream) {
  if (ws.core_.get() != this)
    throw Error(Errc::kInvalidArgument,
                "share '" + name_ + "': commit of a WriteSlot this publisher did not hand out");
  if (device_) {
    try {
      device_->markWritten(ws.slot_, stream, stream ? nullptr : meta.gpu.readyEvent);
    } catch (...) {
      abandon(ws);
      throw;
    }
  }
  commitRecorded(ws, meta, device_ ? stream : nullptr);
}

void PublisherCore::commitRecorded(WriteSlot& ws, const Frame& meta, void* stream) {
  if (ws.core_.get() != this)
    throw Error(Errc::kInvalidArgument,
                "share '" + name_ + "': commit of a WriteSlot this publisher did not hand out");
  if (encoded_ && meta.bytesUsed > layout_.image.totalBytes) {
    abandon(ws);
    throw Error(Errc::kInvalidArgument, "share '" + name_ + "': unit of " + std::to_string(meta.bytesUsed) +
                                            " bytes exceeds the slot capacity of " +
                                            std::to_string(layout_.image.totalBytes));
  }
  std::vector<std::shared_ptr<void>> signals;  // readers' semaphores to signal once published
  SlotRecord rec;
  rec.sequence = meta.sequence;
  rec.wallClockMs = meta.wallClockMs;
  for (std::size_t i = 0; i < kStageCount; ++i) rec.stageNs[i] = meta.times.ns[i];
  rec.bytesUsed = encoded_ ? meta.bytesUsed : layout_.image.totalBytes;
  rec.format = formatToWire(encoded_ && meta.format != PixelFormat::kUnknown ? meta.format : layout_.image.format);
  rec.width = encoded_ ? meta.width : layout_.image.width;
  rec.height = encoded_ ? meta.height : layout_.image.height;
  rec.planeCount = layout_.image.planeCount;
  for (std::uint32_t i = 0; i < kMaxPlanes; ++i) {
    rec.planeOffset[i] = layout_.image.planes[i].offset;
    rec.planePitch[i] = layout_.image.planes[i].pitch;
  }
  rec.matrix = matrixToWire(meta.color.matrix);
  rec.range = rangeToWire(meta.color.range);
  rec.keyframe = meta.keyframe ? 1 : 0;
  rec.memory = static_cast<std::uint8_t>(memoryToWire(layout_.memory));
  {
    std::lock_guard lock(mutex_);
    rec.publishIndex = ++lastIndex_;
    rec.publishNs = monotonicNs();
    endWrite(slotHeaders_[ws.slot_], ws.seqBefore_, rec);
    slotIndex_[ws.slot_] = rec.publishIndex;
    writing_[ws.slot_] = false;
    latestSlot_ = ws.slot_;
    ++publishes_;
    header_->latest.store(packLatest(rec.publishIndex, ws.slot_), std::memory_order_release);
    header_->publishes.store(publishes_, std::memory_order_relaxed);
    if (device_) {
      // The next frame's slot, as acquire() will choose it unless leases change first: a renderer
      // submits its draw of that slot before the frame exists (Subscriber::upcoming()).
      const std::int64_t nowMs = monotonicNs() / 1'000'000;
      const auto next = pickSlot(slotStates(nowMs, false), nowMs, options_.leaseTimeout.count());
      header_->upcoming.store(next ? packLatest(lastIndex_ + 1, next->slot) : 0, std::memory_order_release);
      for (const auto& r : readers_)
        if (r->semaphore) signals.push_back(r->semaphore);
    }
  }
  ws.core_.reset();
  if (!signals.empty()) signalReaders(signals, rec.publishIndex, ws.slot_, stream);
  wakeReaders();
}

void PublisherCore::signalReaders(const std::vector<std::shared_ptr<void>>& semaphores,
                                  std::uint64_t publishIndex, std::uint32_t slot, void* stream) noexcept {
  DeviceTransport* transport = deviceTransport();
  const std::lock_guard lock(signalMutex_);
  // Values only grow: a commit that overtook this one (two WriteSlots in flight) already signalled
  // past it, and a timeline semaphore never goes back.
  if (publishIndex <= lastSignalled_ || transport == nullptr) return;
  lastSignalled_ = publishIndex;
  for (const auto& semaphore : semaphores) {
    try {
      // On the producer's own stream where the commit named it (one stream, no wait between: what makes
      // a renderer's presubmitted read start soonest), else after the slot's event.
      if (stream != nullptr)
        transport->signalSemaphoreOnStream(semaphore.get(), publishIndex, stream);
      else
        transport->signalSemaphore(semaphore.get(), true, publishIndex, device_->slotEvent(slot),
                                   device_->device());
    } catch (const std::exception& e) {
      // The renderer waits on the GPU for a value that will not come; it gives up by its own timeout.
      log::warn("share '", name_, "': signalling a reader's semaphore for publish ", publishIndex,
                " failed, no more signals to it: ", e.what());
      std::lock_guard readers(mutex_);
      for (const auto& r : readers_)
        if (r->semaphore == semaphore) r->semaphore.reset();
    }
  }
}

void PublisherCore::abandon(WriteSlot& ws) noexcept {
  if (ws.core_.get() != this) return;
  {
    std::lock_guard lock(mutex_);
    abortWrite(slotHeaders_[ws.slot_], ws.seqBefore_);
    slotIndex_[ws.slot_] = 0;
    writing_[ws.slot_] = false;
  }
  ws.core_.reset();
}

ShareStats PublisherCore::stats() const {
  std::lock_guard lock(mutex_);
  ShareStats s;
  s.readersConnected = static_cast<std::uint32_t>(readers_.size());
  s.publishes = publishes_;
  s.overruns = overruns_;
  s.leaseSkips = leaseSkips_;
  s.rejectedClients = rejected_.load();
  s.idleReadersDropped = idleDropped_;
  s.futureLeaseStamps = futureStamps_;
  s.bytesCopied = bytesCopied_.load(std::memory_order_relaxed);
  const std::int64_t nowMs = monotonicNs() / 1'000'000;
  std::vector<bool> leased(layout_.slots, false);
  for (const auto& r : readers_) {
    for (std::uint32_t e = 0; e < kLeaseEntries; ++e) {
      const std::uint64_t v = r->leases()->entry[e].load();
      if (v != 0 && leaseSlot(v) < layout_.slots &&
          leaseLive(static_cast<std::int64_t>(leaseMs(v)), nowMs, options_.leaseTimeout.count())) {
        leased[leaseSlot(v)] = true;
      }
    }
  }
  s.leasedSlots = static_cast<std::uint32_t>(std::count(leased.begin(), leased.end(), true));
  return s;
}

}  // namespace zerohop::share_detail
