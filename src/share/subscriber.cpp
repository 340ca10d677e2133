// Subscriber and SharedFrame: latest()/next() over a ReaderSession, reconnecting on request.
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <string>
#include <thread>

#include "share/reader_session.hpp"
#include "share/unix_socket.hpp"
#include "zerohop/clock.hpp"
#include "zerohop/error.hpp"
#include "zerohop/share.hpp"

namespace zerohop {

using share_detail::ReaderCounters;
using share_detail::ReaderSession;

namespace {
constexpr int kReadAttempts = 8;
// next() re-checks that the publisher is alive at least this often while it waits (a SIGKILLed
// publisher cannot wake us; its socket's hang-up is what we notice).
constexpr std::int64_t kLivenessSliceNs = 100'000'000;  // 100 ms
// How often a subscriber waiting for its publisher to appear (waitForPublisher) looks again.
constexpr auto kPublisherPoll = std::chrono::milliseconds(10);
}  // namespace

bool SharedFrame::valid() const noexcept {
  if (!lease_ || !session_) return false;
  const bool ok = session_->stillValid(ringSlot_, seq_);
  if (!ok && !overrunCounted_) {
    overrunCounted_ = true;
    session_->counters().overruns.fetch_add(1, std::memory_order_relaxed);
  }
  return ok;
}

std::optional<DeviceRingMemory> SharedFrame::deviceMemory() const noexcept {
  if (!lease_ || !session_) return std::nullopt;
  return session_->deviceMemory(ringSlot_);
}

void SharedFrame::waitReady() const {
  const Frame& f = frame();
  if (!lease_ || f.memory != MemoryKind::kDevice || f.gpu.readyEvent == nullptr) return;
  share_detail::DeviceTransport* transport = share_detail::deviceTransport();
  if (transport == nullptr)
    throw Error(Errc::kUnsupported, "SharedFrame::waitReady: a device frame in a reader built without CUDA");
  transport->synchronizeEvent(f.gpu.readyEvent, f.gpu.device);
}

void SharedFrame::copyToHost(void* dst, std::size_t bytes) const {
  const Frame& f = frame();
  if (!lease_) throw Error(Errc::kInvalidArgument, "SharedFrame::copyToHost: the frame was released");
  if (bytes > f.capacity)
    throw Error(Errc::kInvalidArgument, "SharedFrame::copyToHost: " + std::to_string(bytes) +
                                            " bytes asked of a slot of " + std::to_string(f.capacity));
  if (f.memory != MemoryKind::kDevice) {
    std::memcpy(dst, f.data[0], bytes);
    return;
  }
  share_detail::DeviceTransport* transport = share_detail::deviceTransport();
  if (transport == nullptr)
    throw Error(Errc::kUnsupported, "SharedFrame::copyToHost: a device frame in a reader built without CUDA");
  transport->copyToHost(dst, f.data[0], bytes, f.gpu.readyEvent, f.gpu.device);
}

class Subscriber::Impl {
 public:
  Impl(std::string name, SubscribeOptions options) : name_(std::move(name)), options_(std::move(options)) {
    share_detail::validateShareName(name_);
    const std::string dir =
        options_.directory.empty() ? share_detail::defaultShareDirectory() : options_.directory;
    socketPath_ = share_detail::socketPathFor(dir, name_);
    counters_ = std::make_shared<ReaderCounters>();
    // Wait for a publisher while nobody serves NAME: no socket file yet, or the file of one that
    // died (SIGKILL leaves it) until its successor replaces it. Nothing to block on in either case.
    const std::int64_t deadline =
        monotonicNs() + std::chrono::duration_cast<std::chrono::nanoseconds>(options_.waitForPublisher).count();
    for (;;) {
      bool stale = false;
      UniqueFd socket = ReaderSession::dial(name_, socketPath_, stale);
      if (socket) {
        attach(ReaderSession::handshake(name_, socketPath_, std::move(socket), options_, counters_));
        return;
      }
      if (monotonicNs() >= deadline) throw ReaderSession::absent(name_, socketPath_, stale);
      std::this_thread::sleep_for(kPublisherPoll);
    }
  }

  void connect() {
    disarm();
    session_.reset();
    try {
      attach(ReaderSession::connect(name_, socketPath_, options_, counters_));
      arm();
    } catch (...) {
      session_.reset();
      signal();  // pollFd() stays readable: the caller's next read reports the publisher gone
      throw;
    }
    signal();  // the newest frame is there to read
  }

  /// pollFd(): an epoll set of our eventfd (the publisher adds 1 on each publish and on close) and
  /// the session's socket (hang-up: the publisher died), created on first use.
  int pollFd() {
    if (pollFd_) return pollFd_.get();
    UniqueFd notify(::eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK));
    if (!notify) throwErrno("eventfd", errno, "Subscriber::pollFd");
    UniqueFd set(::epoll_create1(EPOLL_CLOEXEC));
    if (!set) throwErrno("epoll_create1", errno, "Subscriber::pollFd");
    epoll_event ev{};
    ev.events = EPOLLIN;
    ev.data.fd = notify.get();
    if (::epoll_ctl(set.get(), EPOLL_CTL_ADD, notify.get(), &ev) != 0)
      throwErrno("epoll_ctl", errno, "Subscriber::pollFd");
    notifyFd_ = std::move(notify);
    pollFd_ = std::move(set);
    if (session_) {
      try {
        arm();
      } catch (...) {
        pollFd_.reset();
        notifyFd_.reset();
        throw;
      }
    }
    signal();  // frames already published are read with the first next(0)
    return pollFd_.get();
  }

  /// The session joins the poll set: the publisher signals our eventfd, its socket's hang-up wakes it too.
  void arm() {
    if (!pollFd_ || !session_) return;
    session_->enableNotify(notifyFd_.get(), options_.handshakeTimeout);
    epoll_event ev{};
    ev.events = EPOLLRDHUP;  // EPOLLHUP and EPOLLERR are always reported
    ev.data.fd = session_->socketFd();
    if (::epoll_ctl(pollFd_.get(), EPOLL_CTL_ADD, ev.data.fd, &ev) != 0)
      throwErrno("epoll_ctl", errno, "Subscriber::pollFd");
    watchedSocket_ = ev.data.fd;
  }

  /// Takes the session's socket out of the poll set (before the session is dropped: SharedFrames may
  /// keep its socket open, and a hung-up socket would keep pollFd() readable for ever).
  void disarm() noexcept {
    if (watchedSocket_ < 0) return;
    (void)::epoll_ctl(pollFd_.get(), EPOLL_CTL_DEL, watchedSocket_, nullptr);
    watchedSocket_ = -1;
  }

  void signal() noexcept {
    const std::uint64_t one = 1;
    if (notifyFd_) (void)!::write(notifyFd_.get(), &one, sizeof(one));
  }

  /// Resets pollFd()'s readiness; called before the ring is looked at, so a publish after the look
  /// makes it readable again.
  void drainNotify() noexcept {
    std::uint64_t count = 0;
    if (notifyFd_) (void)!::read(notifyFd_.get(), &count, sizeof(count));
  }

  void attach(std::shared_ptr<ReaderSession> session) {
    session_ = std::move(session);
    info_ = session_->info();
    // A fresh subscriber's next() starts with the newest frame already published.
    const auto l = session_->latest();
    lastIndex_ = l ? l->first - 1 : 0;
  }

  ReaderSession& session() {
    if (!session_) throw ReaderSession::wentAway(name_);
    return *session_;
  }

  /// Throws kUnavailable when the publisher is gone. A device session is dropped first: its IPC
  /// mapping closes as soon as the last SharedFrame lets go, so the publisher may free its slots.
  void ensureAlive() {
    if (!session_->gone()) return;
    if (session_->onDevice()) {
      disarm();
      session_.reset();
      signal();  // pollFd() stays readable while the publisher is gone
    }
    throw ReaderSession::wentAway(name_);
  }

  std::optional<SharedFrame> latest() {
    auto& s = session();
    drainNotify();
    ensureAlive();
    for (int attempt = 0; attempt < kReadAttempts; ++attempt) {
      const auto l = s.latest();
      if (!l) return std::nullopt;
      if (auto f = s.tryRead(l->second, l->first)) {
        lastIndex_ = std::max(lastIndex_, f->publishIndex());
        noteUnitSize(*f);
        return f;
      }
      counters_->overruns.fetch_add(1, std::memory_order_relaxed);  // rewritten while we looked
    }
    return std::nullopt;
  }

  std::optional<SharedFrame> next(std::chrono::milliseconds timeout) {
    auto& s = session();
    drainNotify();
    // Clamped to a day: nanoseconds of milliseconds::max() would overflow.
    const std::int64_t deadline =
        monotonicNs() + std::clamp<std::int64_t>(timeout.count(), 0, 86'400'000) * 1'000'000;
    const std::int64_t spinNs = std::chrono::nanoseconds(options_.spinBeforeSleep).count();
    const std::int64_t anticipateNs = std::chrono::nanoseconds(options_.anticipate).count();
    bool spun = false, anticipated = false;
    for (;;) {
      ensureAlive();
      const std::uint32_t seen = s.wakeWord();
      if (const auto candidate = s.oldestAfter(lastIndex_)) {
        if (auto f = s.tryRead(candidate->second, lastIndex_ + 1)) {
          if (f->publishIndex() > lastIndex_ + 1) {
            counters_->missed.fetch_add(f->publishIndex() - lastIndex_ - 1, std::memory_order_relaxed);
          }
          learnPeriod(*f);
          lastIndex_ = f->publishIndex();
          noteUnitSize(*f);
          return f;
        }
        counters_->overruns.fetch_add(1, std::memory_order_relaxed);
        continue;
      }
      const std::int64_t now = monotonicNs();
      if (now >= deadline) return std::nullopt;
      // A frame due within the anticipation window: spin for it instead of paying a futex wake-up.
      if (anticipateNs > 0 && periodNs_ > 0 && !anticipated) {
        const std::int64_t due = lastPublishNs_ + periodNs_;
        if (now >= due - anticipateNs && now < due + anticipateNs) {
          anticipated = spun = true;
          if (s.spinForPublish(seen, std::chrono::nanoseconds(std::min(due + anticipateNs, deadline) - now)))
            continue;
        } else if (now < due - anticipateNs) {
          s.waitForPublish(seen, std::chrono::nanoseconds(
                                     std::min({due - anticipateNs, deadline, now + kLivenessSliceNs}) - now));
          continue;
        }
      }
      if (!spun) {
        spun = true;  // spin once per call: a second miss means the publisher is slower than the spin
        if (s.spinForPublish(seen, std::chrono::nanoseconds(std::min(spinNs, deadline - now)))) continue;
      }
      s.waitForPublish(seen, std::chrono::nanoseconds(std::min(deadline - now, kLivenessSliceNs)));
    }
  }

  /// Encoded rings: info() reports the picture size of the newest unit handed out.
  void noteUnitSize(const SharedFrame& f) {
    if (!info_.encoded || f->width == 0) return;
    info_.layout.width = f->width;
    info_.layout.height = f->height;
  }

  /// The publisher's frame period from consecutive frames' commit times (EWMA), for `anticipate`.
  void learnPeriod(const SharedFrame& f) {
    const std::uint64_t gap = f.publishIndex() - lastIndex_;
    if (lastPublishNs_ > 0 && gap > 0 && gap <= 4 && f.publishNs() > lastPublishNs_) {
      const std::int64_t period = (f.publishNs() - lastPublishNs_) / static_cast<std::int64_t>(gap);
      periodNs_ = periodNs_ == 0 ? period : (7 * periodNs_ + period) / 8;
    }
    lastPublishNs_ = f.publishNs();
  }

  std::string name_;
  SubscribeOptions options_;
  std::string socketPath_;
  std::shared_ptr<ReaderCounters> counters_;
  std::shared_ptr<ReaderSession> session_;
  ShareInfo info_;  // of the last session, kept after a device session was dropped
  std::uint64_t lastIndex_ = 0;
  std::int64_t lastPublishNs_ = 0;  // commit time of the last frame next() returned
  std::int64_t periodNs_ = 0;       // learnt publish period (0 = not yet known)
  UniqueFd notifyFd_;               // pollFd(): our eventfd, registered with each session's publisher
  UniqueFd pollFd_;                 // pollFd(): epoll set of notifyFd_ and the session's socket
  int watchedSocket_ = -1;          // the session socket in pollFd_, -1 = none
};

Subscriber::Subscriber(std::string name, SubscribeOptions options)
    : impl_(std::make_unique<Impl>(std::move(name), std::move(options))) {}
Subscriber::~Subscriber() = default;
Subscriber::Subscriber(Subscriber&&) noexcept = default;
Subscriber& Subscriber::operator=(Subscriber&&) noexcept = default;

std::optional<SharedFrame> Subscriber::latest() {
  return impl_->latest();
}
std::optional<SharedFrame> Subscriber::next(std::chrono::milliseconds timeout) {
  return impl_->next(timeout);
}

void Subscriber::reconnect() {
  impl_->connect();
  impl_->counters_->reconnects.fetch_add(1, std::memory_order_relaxed);
}

int Subscriber::pollFd() {
  return impl_->pollFd();
}

bool Subscriber::connected() const {
  return impl_->session_ && !impl_->session_->gone();
}

void Subscriber::signalOnPublish(int fd) {
  UniqueFd owned(fd);
  if (!impl_->session_) throw ReaderSession::wentAway(impl_->name_);
  if (!impl_->session_->onDevice())
    throw Error(Errc::kUnsupported,
                "Subscriber::signalOnPublish: share '" + impl_->name_ +
                    "' is a host ring: its frames are complete at commit, nothing to signal");
  impl_->session_->enableSignal(owned.get(), impl_->options_.handshakeTimeout);
}

std::optional<UpcomingFrame> Subscriber::upcoming() const {
  if (!impl_->session_ || !impl_->session_->onDevice()) return std::nullopt;
  return impl_->session_->upcoming();
}

std::optional<SharedFrame> Subscriber::confirm(const UpcomingFrame& frame) {
  if (!impl_->session_ || frame.publishIndex == 0 || frame.slot >= impl_->session_->info().slots)
    return std::nullopt;
  std::optional<SharedFrame> f = impl_->session_->tryRead(frame.slot, frame.publishIndex);
  if (!f || f->publishIndex() != frame.publishIndex) return std::nullopt;  // elsewhere, or overwritten since
  impl_->learnPeriod(*f);
  impl_->lastIndex_ = std::max(impl_->lastIndex_, f->publishIndex());
  return f;
}

const ShareInfo& Subscriber::info() const noexcept {
  return impl_->info_;
}

SubscriberStats Subscriber::stats() const {
  const auto& c = *impl_->counters_;
  return SubscriberStats{c.frames.load(), c.overruns.load(), c.missed.load(), c.reconnects.load()};
}

}  // namespace zerohop
