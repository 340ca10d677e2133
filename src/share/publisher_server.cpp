// PublisherCore's server thread: accepts readers, checks their credentials, answers Hellos with
// Welcome + descriptors (or a Reject), and drops readers whose sockets hang up, which releases
// every lease they held. Nothing a client sends may stop it.
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <thread>
#include <cerrno>
#include <cstring>
#include <new>
#include <string_view>

#include "share/publisher_core.hpp"
#include "share/unix_socket.hpp"
#include "share/wire.hpp"
#include "zerohop/clock.hpp"
#include "zerohop/error.hpp"
#include "zerohop/log.hpp"

namespace zerohop::share_detail {

// ---- server thread ---------------------------------------------------------------------------

int PublisherCore::dropIdleReaders() {
  const std::int64_t idleMs = options_.readerIdleTimeout.count();
  if (idleMs <= 0) return -1;
  const std::int64_t nowMs = monotonicNs() / 1'000'000;
  std::lock_guard lock(mutex_);
  if (readers_.empty()) return -1;
  const std::size_t before = readers_.size();
  std::erase_if(readers_, [&](const std::unique_ptr<Reader>& r) {
    const std::uint64_t reads = r->leases()->reads.load(std::memory_order_relaxed);
    if (reads != r->readsSeen || publishes_ == r->publishesAtActive) {
      // It read, or there was nothing to read: it is not idle.
      r->readsSeen = reads;
      r->activeMs = nowMs;
      r->publishesAtActive = publishes_;
      return false;
    }
    if (nowMs - r->activeMs < idleMs) return false;
    log::info("share '", name_, "': reader ", r->id, " (pid ", r->pid, ") took no frame for ", nowMs - r->activeMs,
              " ms while ", publishes_ - r->publishesAtActive, " were published; dropped (readerIdleTimeout)");
    ++idleDropped_;
    return true;  // closes its socket: the reader sees the end of the session
  });
  if (readers_.size() != before) readersLeft_.notify_all();
  return static_cast<int>(std::clamp<std::int64_t>(idleMs / 4, 10, 1000));
}

void PublisherCore::serve() noexcept {
  std::vector<pollfd> fds;
  std::vector<Reader*> polledReaders;
  while (!stopping_.load()) {
    fds.clear();
    polledReaders.clear();
    fds.push_back({wakeFd_.get(), POLLIN, 0});
    fds.push_back({listenFd_.get(), POLLIN, 0});
    for (auto& p : pending_) fds.push_back({p.socket.get(), POLLIN, 0});
    {
      std::lock_guard lock(mutex_);
      for (auto& r : readers_) {
        fds.push_back({r->socket.get(), POLLIN | POLLRDHUP, 0});
        polledReaders.push_back(r.get());
      }
    }
    int timeoutMs = dropIdleReaders();
    const std::int64_t now = monotonicNs();
    for (auto& p : pending_) {
      const auto left = std::max<std::int64_t>(0, (p.deadlineNs - now) / 1'000'000 + 1);
      timeoutMs = timeoutMs < 0 ? static_cast<int>(left) : std::min(timeoutMs, static_cast<int>(left));
    }
    const int rc = ::poll(fds.data(), fds.size(), timeoutMs);
    if (rc < 0) {
      if (errno == EINTR) continue;
      log::error("share '", name_, "': poll failed: ", std::strerror(errno), "; server thread stops");
      return;
    }
    if (stopping_.load()) return;
    try {
      // Departed readers first: their leases must stop counting as soon as possible.
      std::vector<Reader*> gone;
      for (std::size_t i = 0; i < polledReaders.size(); ++i) {
        const auto& pfd = fds[2 + pending_.size() + i];
        if (pfd.revents == 0) continue;
        bool closed = (pfd.revents & (POLLHUP | POLLRDHUP | POLLERR | POLLNVAL)) != 0;
        if (!closed) {
          try {
            closed = !readerMessage(*polledReaders[i]);
          } catch (const Error&) {
            closed = true;
          }
        }
        if (closed) gone.push_back(polledReaders[i]);
      }
      if (!gone.empty()) {
        std::lock_guard lock(mutex_);
        std::erase_if(readers_, [&](const std::unique_ptr<Reader>& r) {
          if (std::find(gone.begin(), gone.end(), r.get()) == gone.end()) return false;
          log::debug("share '", name_, "': reader ", r->id, " (pid ", r->pid,
                     ") left; its leases are released");
          return true;
        });
        readersLeft_.notify_all();
      }
      // Pending handshakes: answer Hellos, drop the silent.
      const std::int64_t t = monotonicNs();
      std::vector<Pending> still;
      for (std::size_t i = 0; i < pending_.size(); ++i) {
        auto& p = pending_[i];
        const auto revents = fds[2 + i].revents;
        if (revents != 0) {
          if (!handleHello(p)) still.push_back(std::move(p));
        } else if (t >= p.deadlineNs) {
          reject(p.socket, Errc::kTimeout,
                 "no Hello within " + std::to_string(options_.handshakeTimeout.count()) + " ms");
        } else {
          still.push_back(std::move(p));
        }
      }
      pending_ = std::move(still);
      if (fds[1].revents & POLLIN) acceptClients();
    } catch (const std::exception& e) {
      // Nothing a client sends may stop the server; log and carry on.
      log::warn("share '", name_, "': ", e.what());
    }
  }
}

bool PublisherCore::readerMessage(Reader& reader) {
  auto msg = receiveMessageNow(reader.socket.get());
  if (!msg) return false;
  if (msg->bytes.empty() && msg->fds.empty()) return true;  // spurious wake-up
  // After the Hello a reader sends only Notify or Signal; anything else is drained and ignored.
  const MessageHeader h = decodeHeader(msg->bytes);
  if (h.type == MessageType::kSignal) {
    decodeEmpty(msg->bytes, MessageType::kSignal);
    readerSignal(reader, msg->fds);
    return true;
  }
  if (h.type != MessageType::kNotify) return true;
  decodeEmpty(msg->bytes, MessageType::kNotify);
  // Only an eventfd: a write to it never blocks the publisher (a pipe or socket could).
  char target[64] = {};
  const std::string link = "/proc/self/fd/" + (msg->fds.size() == 1 ? std::to_string(msg->fds[0].get()) : "-1");
  if (msg->fds.size() != 1 || ::readlink(link.c_str(), target, sizeof(target) - 1) < 0 ||
      std::string_view(target) != "anon_inode:[eventfd]") {
    sendMessage(reader.socket.get(),
                encodeReject(Reject{Errc::kProtocol, "a Notify carries exactly one eventfd"}));
    return true;
  }
  {
    std::lock_guard lock(mutex_);
    reader.notify = std::move(msg->fds[0]);
    anyNotify_.store(true, std::memory_order_release);
  }
  sendMessage(reader.socket.get(), encodeEmpty(MessageType::kNotifyOk));
  log::debug("share '", name_, "': reader ", reader.id, " (pid ", reader.pid, ") polls an eventfd");
  return true;
}

void PublisherCore::readerSignal(Reader& reader, std::vector<UniqueFd>& fds) {
  const auto refuse = [&](Errc code, const std::string& why) {
    sendMessage(reader.socket.get(), encodeReject(Reject{code, why}));
  };
  if (fds.size() != 1) return refuse(Errc::kProtocol, "a Signal carries exactly one semaphore fd");
  DeviceTransport* transport = deviceTransport();
  if (!device_ || transport == nullptr)
    return refuse(Errc::kUnsupported, "share '" + name_ +
                                          "' is a host ring: its frames are complete at "
                                          "commit, there is nothing to signal");
  std::shared_ptr<void> semaphore;
  try {
    // The publisher's own CUDA context signals it: no third context between the producer's work and
    // the renderer's.
    semaphore = transport->importSemaphore(fds[0].release(), true, device_->device());
  } catch (const Error& e) {
    return refuse(e.code(), e.what());
  }
  {
    std::lock_guard lock(mutex_);
    reader.semaphore = std::move(semaphore);
  }
  sendMessage(reader.socket.get(), encodeEmpty(MessageType::kSignalOk));
  log::debug("share '", name_, "': reader ", reader.id, " (pid ", reader.pid,
             ") has its semaphore signalled with each publish");
}

bool PublisherCore::peerAllowed(int socketFd, std::string& why) const {
  const PeerCredentials cred = peerCredentials(socketFd);
  if (cred.uid == ::geteuid()) return true;
  if (options_.allowGroup) {
    if (cred.gid == *options_.allowGroup) return true;
    gid_t groups[256];
    socklen_t len = sizeof(groups);
    if (::getsockopt(socketFd, SOL_SOCKET, SO_PEERGROUPS, groups, &len) == 0) {
      for (std::size_t i = 0; i < len / sizeof(gid_t); ++i) {
        if (groups[i] == *options_.allowGroup) return true;
      }
    }
  }
  why = "uid " + std::to_string(cred.uid) + " (pid " + std::to_string(cred.pid) + ") may not subscribe to '" +
        name_ + "': the publisher runs as uid " + std::to_string(::geteuid()) +
        (options_.allowGroup ? " and allows gid " + std::to_string(*options_.allowGroup)
                             : " and allows no group");
  return false;
}

void PublisherCore::acceptClients() {
  for (;;) {
    UniqueFd client(::accept4(listenFd_.get(), nullptr, nullptr, SOCK_CLOEXEC | SOCK_NONBLOCK));
    if (!client) {
      if (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR) return;
      if (errno == ECONNABORTED || errno == EPROTO) continue;
      if (errno == EMFILE || errno == ENFILE || errno == ENOBUFS || errno == ENOMEM) {
        // Out of descriptors or memory: the connection stays queued and poll would report it again at
        // once. Pause briefly instead of spinning; existing readers are still served.
        log::warn("share '", name_, "': accept4 failed: ", std::strerror(errno), "; retrying in 50 ms");
        std::this_thread::sleep_for(std::chrono::milliseconds(50));
        return;
      }
      throwErrno("accept4", errno, socketPath_);
    }
    std::string why;
    if (!peerAllowed(client.get(), why)) {
      log::warn("share '", name_, "': refused ", why);
      reject(client, Errc::kUnavailable, why);
      continue;
    }
    std::size_t readers;
    {
      std::lock_guard lock(mutex_);
      readers = readers_.size();
    }
    if (readers + pending_.size() >= options_.maxReaders) {
      reject(client, Errc::kUnavailable,
             "share '" + name_ + "' already has its maximum of " + std::to_string(options_.maxReaders) +
                 " readers");
      continue;
    }
    pending_.push_back(
        Pending{std::move(client), monotonicNs() + options_.handshakeTimeout.count() * 1'000'000});
  }
}

void PublisherCore::reject(UniqueFd& socket, Errc code, const std::string& reason) noexcept {
  ++rejected_;
  try {
    sendMessage(socket.get(), encodeReject(Reject{code, reason}));
  } catch (const Error&) {
    // The client is gone already; nothing to tell it.
  }
  socket.reset();
}

bool PublisherCore::handleHello(Pending& p) {
  std::optional<ReceivedMessage> msg;
  try {
    msg = receiveMessageNow(p.socket.get());
  } catch (const Error& e) {
    reject(p.socket, Errc::kProtocol, e.what());
    return true;
  }
  if (!msg) {  // left before saying anything
    p.socket.reset();
    return true;
  }
  if (msg->bytes.empty() && msg->fds.empty()) return false;  // spurious wake-up
  try {
    if (!msg->fds.empty()) throw Error(Errc::kProtocol, "a Hello must not carry file descriptors");
    const MessageHeader h = decodeHeader(msg->bytes);
    if (h.type != MessageType::kHello) {
      throw Error(Errc::kProtocol,
                  "expected Hello, got message type " + std::to_string(static_cast<unsigned>(h.type)));
    }
    // Every protocol version starts a Hello's payload with {u16 minVersion, u16 maxVersion}.
    std::uint16_t minV = h.version, maxV = h.version;
    if (h.payloadBytes >= 4) {
      minV = static_cast<std::uint16_t>(msg->bytes[kHeaderBytes] | (msg->bytes[kHeaderBytes + 1] << 8));
      maxV = static_cast<std::uint16_t>(msg->bytes[kHeaderBytes + 2] | (msg->bytes[kHeaderBytes + 3] << 8));
    }
    if (kProtocolVersion < minV || kProtocolVersion > maxV) {
      throw Error(Errc::kProtocol, "client speaks share protocol v" + std::to_string(minV) +
                                       (minV == maxV ? "" : "..v" + std::to_string(maxV)) + ", publisher '" +
                                       name_ + "' speaks v" + std::to_string(kProtocolVersion) +
                                       ": rebuild the client against the same zerohop");
    }
    const Hello hello = decodeHello(msg->bytes);
    if (header_->state.load(std::memory_order_acquire) == static_cast<std::uint32_t>(RingState::kClosed)) {
      reject(p.socket, Errc::kUnavailable, "share '" + name_ + "' is closing");
      return true;
    }
    if (device_ && !(hello.acceptMemory & kAcceptDevice)) {
      reject(p.socket, Errc::kUnsupported,
             "this reader was built without CUDA; publisher '" + name_ +
                 "' shares device memory (link zerohop::share_cuda and run where a CUDA device is)");
      return true;
    }
    if (!device_ && !(hello.acceptMemory & kAcceptHost)) {
      reject(p.socket, Errc::kUnsupported,
             "share '" + name_ + "' has host-memory slots; the client accepts only device memory");
      return true;
    }
    // Admit: a lease page only this reader writes, then Welcome + the three descriptors.
    auto reader = std::make_unique<Reader>();
    UniqueFd leaseFd = createSealedMemfd(("zerohop-lease-" + name_).c_str(), kLeasePageBytes);
    reader->leasePage = MappedRegion::map(leaseFd.get(), kLeasePageBytes, true, "share lease page");
    new (reader->leasePage.data()) LeasePage{};
    reader->pid = hello.pid;
    reader->inProcess = peerCredentials(p.socket.get()).pid == ::getpid();
    Welcome w;
    w.transport = device_ ? device_->transport() : Transport::kHostMemfd;
    w.fdCount = device_ ? 2 : 3;
    w.leaseEntries = kLeaseEntries;
    w.controlBytes = control_.size();
    w.slotBytes = device_ ? slotStride_ * layout_.slots : slots_.size();
    w.leaseBytes = kLeasePageBytes;
    w.sessionId = sessionId_;
    // The lease page is watched before the reader can write it: register first, then Welcome.
    // (The other order lets a fast reader lease a slot the publisher does not yet know about.)
    Reader* registered = reader.get();
    const int socketFd = p.socket.get();
    reader->socket = std::move(p.socket);
    {
      std::lock_guard lock(mutex_);
      reader->id = nextReaderId_++;
      w.readerId = reader->id;
      reader->activeMs = monotonicNs() / 1'000'000;
      reader->publishesAtActive = publishes_;
      readers_.push_back(std::move(reader));
    }
    try {
      if (device_) {
        // The CUDA handles follow the Welcome on the same 0600 socket, never anywhere else.
        const int fds[2] = {controlFd_.get(), leaseFd.get()};
        sendMessage(socketFd, encodeWelcome(w), fds);
        sendMessage(socketFd, device_->slotsMessage(), device_->slotsMessageFds());
        sendMessage(socketFd, device_->eventsMessage());
      } else {
        const int fds[3] = {controlFd_.get(), slotsFd_.get(), leaseFd.get()};
        sendMessage(socketFd, encodeWelcome(w), fds);
      }
    } catch (const Error&) {
      std::lock_guard lock(mutex_);
      std::erase_if(readers_, [&](const std::unique_ptr<Reader>& r) { return r.get() == registered; });
      readersLeft_.notify_all();
      throw;
    }
    log::debug("share '", name_, "': reader ", w.readerId, " (pid ", hello.pid, ") subscribed");
  } catch (const Error& e) {
    log::warn("share '", name_, "': handshake refused: ", e.what());
    if (p.socket)
      reject(p.socket, e.code() == Errc::kProtocol ? Errc::kProtocol : Errc::kUnavailable, e.what());
  }
  return true;
}

}  // namespace zerohop::share_detail
