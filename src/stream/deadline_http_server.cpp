#include "stream/deadline_http_server.hpp"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <condition_variable>
#include <cstring>
#include <deque>
#include <functional>
#include <map>
#include <mutex>
#include <optional>
#include <system_error>
#include <thread>
#include <unordered_map>
#include <vector>

#include "stream/checked_request_stream.hpp"
#include "stream/http_worker_pool.hpp"
#include "stream/tls_context.hpp"
#include "zerohop/log.hpp"

namespace zerohop::stream {
namespace {

using Clock = std::chrono::steady_clock;

const char* statusText(int status) {
  switch (status) {
    case 400: return "Bad Request";
    case 408: return "Request Timeout";
    case 411: return "Length Required";
    case 413: return "Payload Too Large";
    case 414: return "URI Too Long";
    case 417: return "Expectation Failed";
    case 431: return "Request Header Fields Too Large";
    case 501: return "Not Implemented";
    case 503: return "Service Unavailable";
    case 505: return "HTTP Version Not Supported";
    default: return "Error";
  }
}

// Best effort, never blocks; through TLS once its handshake is done (nothing before: the client
// would read plain text as a broken TLS record).
void sendSome(int fd, TlsConnection* tls, const std::string& data) {
  if (tls) {
    if (tls->established()) (void)tls->write(data.data(), data.size());
    return;
  }
  (void)::send(fd, data.data(), data.size(), MSG_NOSIGNAL | MSG_DONTWAIT);
}

// Best effort, never blocks: the answers sent from the accept thread are a few hundred bytes.
void sendRefusal(int fd, TlsConnection* tls, int status, const std::string& reason, bool retryAfter) {
  const std::string body = reason + "\n";
  std::string out = "HTTP/1.1 " + std::to_string(status) + " " + statusText(status) +
                    "\r\nContent-Type: text/plain; charset=utf-8\r\nContent-Length: " + std::to_string(body.size()) +
                    "\r\nConnection: close\r\nAccess-Control-Allow-Origin: *\r\n";
  if (retryAfter) out += "Retry-After: 1\r\n";
  out += "\r\n" + body;
  sendSome(fd, tls, out);
}

// Closes a connection without a reset that could destroy the answer still on its way: what the
// client sent past its request is read and dropped first. A TLS connection says close_notify first.
void closeConnection(int fd, TlsConnection* tls) {
  if (tls) tls->closeNotify();
  char sink[4096];
  while (::recv(fd, sink, sizeof sink, MSG_DONTWAIT) > 0) {
  }
  ::shutdown(fd, SHUT_RDWR);
  ::close(fd);
}



// A connection the accept thread owns: its request is not whole yet.
struct Pending {
  std::unique_ptr<TlsConnection> tls;  // null: plain HTTP
  std::uint32_t events = EPOLLIN | EPOLLRDHUP;  // what epoll waits for (EPOLLOUT while TLS must write)
  std::string ip;
  int port = 0;
  Clock::time_point accepted;
  std::string received;
  bool sentContinue = false;
  // Framing is not repeated for bytes that cannot change its verdict (a trickling client must not
  // make the accept thread re-scan its buffer per byte): the size the whole request will have once
  // the headers are in, and whether a line end has arrived at all.
  std::size_t wholeBytes = 0;
  bool sawLineEnd = false;
  // Refused and answered: what the client still sends is read and dropped until it stops, the cap or
  // the deadline (a close with unread data would reset the connection and lose the answer).
  bool lingering = false;
  Clock::time_point lingerUntil{};
  std::size_t drained = 0;
};

constexpr std::chrono::milliseconds kLinger{2000};
constexpr std::size_t kLingerBytes = 4u << 20;

}  // namespace

struct DeadlineHttpServer::State {
  int listenFd = -1;
  int wakeFd = -1;
  int epollFd = -1;
  int spareFd = -1;  // given up to accept-and-close when the descriptor table is full

  mutable std::mutex mutex;  // guards perAddress, inFlight, counters
  std::unordered_map<std::string, std::size_t> perAddress;  // pending + in flight
  std::size_t inFlight = 0;
  HttpServerCounters counters;

  std::unordered_map<int, Pending> pending;  // accept thread only
  Clock::time_point lastFullLog{};

  std::unique_ptr<HttpWorkerPool> slow;
  std::unique_ptr<HttpWorkerPool> fast;

  void release(const std::string& ip, bool inFlightToo) {
    std::lock_guard lock(mutex);
    auto it = perAddress.find(ip);
    if (it != perAddress.end() && --it->second == 0) perAddress.erase(it);
    if (inFlightToo) --inFlight;
  }
};

DeadlineHttpServer::DeadlineHttpServer(HttpServerLimits limits)
    : limits_(limits), connectionLimit_(limits.maxConnections), state_(std::make_unique<State>()) {
  rlimit nofile{};
  if (::getrlimit(RLIMIT_NOFILE, &nofile) == 0 && nofile.rlim_cur != RLIM_INFINITY) {
    connectionLimit_ = std::max<std::size_t>(8, std::min<std::size_t>(connectionLimit_, nofile.rlim_cur / 4));
  }
  state_->wakeFd = ::eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
  state_->epollFd = ::epoll_create1(EPOLL_CLOEXEC);
  state_->spareFd = ::open("/dev/null", O_RDONLY | O_CLOEXEC);
  if (state_->wakeFd < 0 || state_->epollFd < 0) throw std::system_error(errno, std::generic_category(), "epoll/eventfd");
  epoll_event ev{};
  ev.events = EPOLLIN;
  ev.data.fd = state_->wakeFd;
  ::epoll_ctl(state_->epollFd, EPOLL_CTL_ADD, state_->wakeFd, &ev);
}

DeadlineHttpServer::~DeadlineHttpServer() {
  requestStop();
  if (state_->slow) state_->slow->stop();
  if (state_->fast) state_->fast->stop();
  for (auto& [fd, p] : state_->pending) ::close(fd);
  state_->pending.clear();  // TLS state with them
  for (int fd : {state_->listenFd, state_->wakeFd, state_->epollFd, state_->spareFd}) {
    if (fd >= 0) ::close(fd);
  }
}

int DeadlineHttpServer::bindAndListen(const std::string& host, std::uint16_t port) {
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  hints.ai_flags = AI_PASSIVE | AI_NUMERICSERV;
  addrinfo* result = nullptr;
  if (::getaddrinfo(host.c_str(), std::to_string(port).c_str(), &hints, &result) != 0) return -EADDRNOTAVAIL;
  int err = EADDRNOTAVAIL;
  for (addrinfo* ai = result; ai && state_->listenFd < 0; ai = ai->ai_next) {
    const int fd = ::socket(ai->ai_family, ai->ai_socktype | SOCK_CLOEXEC | SOCK_NONBLOCK, ai->ai_protocol);
    if (fd < 0) {
      err = errno;
      continue;
    }
    // SO_REUSEADDR for a quick restart; not SO_REUSEPORT, which would let a second server share the port.
    const int yes = 1;
    ::setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &yes, sizeof yes);
    if (::bind(fd, ai->ai_addr, ai->ai_addrlen) == 0 && ::listen(fd, 1024) == 0) {
      state_->listenFd = fd;
    } else {
      err = errno;
      ::close(fd);
    }
  }
  ::freeaddrinfo(result);
  if (state_->listenFd < 0) return -err;
  sockaddr_storage addr{};
  socklen_t len = sizeof addr;
  ::getsockname(state_->listenFd, reinterpret_cast<sockaddr*>(&addr), &len);
  std::string ip;
  int bound = 0;
  socketAddressText(addr, ip, bound);
  epoll_event ev{};
  ev.events = EPOLLIN;
  ev.data.fd = state_->listenFd;
  ::epoll_ctl(state_->epollFd, EPOLL_CTL_ADD, state_->listenFd, &ev);
  return bound;
}

void DeadlineHttpServer::setTls(std::shared_ptr<const TlsContext> tls) { tls_ = std::move(tls); }

void DeadlineHttpServer::requestStop() {
  stopping_ = true;
  const std::uint64_t one = 1;
  if (state_->wakeFd >= 0) (void)!::write(state_->wakeFd, &one, sizeof one);
}

std::size_t DeadlineHttpServer::openConnections() const {
  std::lock_guard lock(state_->mutex);
  std::size_t n = 0;
  for (const auto& [ip, count] : state_->perAddress) n += count;
  return n;
}

HttpServerCounters DeadlineHttpServer::counters() const {
  std::lock_guard lock(state_->mutex);
  return state_->counters;
}

bool DeadlineHttpServer::run() {
  State& s = *state_;
  if (s.listenFd < 0) return false;
  auto serve = [this](HttpJob& job) {
    CheckedRequestStream stream(job.fd, job.tls.get(), job.request, job.ip, job.port, limits_.responseDeadline, stopping_);
    bool closed = false;
    try {
      process_request(stream, /*close_connection=*/true, closed, {});
    } catch (const std::exception& e) {  // handlers' exceptions are httplib's; this is anything else
      log::error("http: request from ", job.ip, " failed: ", e.what());
    }
    closeConnection(job.fd, job.tls.get());
    state_->release(job.ip, true);
  };
  auto drop = [this](HttpJob& job) {
    ::close(job.fd);
    state_->release(job.ip, true);
  };
  s.slow = std::make_unique<HttpWorkerPool>(limits_.slowWorkers, limits_.queuePerPool, serve, drop);
  s.fast = std::make_unique<HttpWorkerPool>(limits_.fastWorkers, limits_.queuePerPool, serve, drop);
  running_ = true;

  auto count = [&s](std::uint64_t HttpServerCounters::*field) {
    std::lock_guard lock(s.mutex);
    ++(s.counters.*field);
  };
  auto dropPending = [&s](int fd) {
    auto it = s.pending.find(fd);
    if (it == s.pending.end()) return;
    ::epoll_ctl(s.epollFd, EPOLL_CTL_DEL, fd, nullptr);
    const std::string ip = it->second.ip;
    if (it->second.tls) it->second.tls->closeNotify();
    s.pending.erase(it);
    closeConnection(fd, nullptr);
    s.release(ip, false);
  };
  // Points epoll at what the connection waits for: readable, or writable while TLS must write.
  auto watch = [&s](int fd, Pending& p) {
    const std::uint32_t want = p.tls && p.tls->wantsWrite() ? EPOLLOUT : (EPOLLIN | EPOLLRDHUP);
    if (want == p.events) return;
    p.events = want;
    epoll_event ev{};
    ev.events = want;
    ev.data.fd = fd;
    ::epoll_ctl(s.epollFd, EPOLL_CTL_MOD, fd, &ev);
  };
  // Refused and answered: the rest of what the client sends is read and dropped (see Pending).
  std::function<void(int)> readFrom;
  auto linger = [&](int fd, Pending& p) {
    if (p.tls) p.tls->closeNotify();
    ::shutdown(fd, SHUT_WR);
    p.lingering = true;
    p.lingerUntil = Clock::now() + kLinger;
    p.received.clear();
    p.received.shrink_to_fit();
    if (p.events != (EPOLLIN | EPOLLRDHUP)) {
      p.events = EPOLLIN | EPOLLRDHUP;
      epoll_event ev{};
      ev.events = p.events;
      ev.data.fd = fd;
      ::epoll_ctl(s.epollFd, EPOLL_CTL_MOD, fd, &ev);
    }
    readFrom(fd);
  };
  // The oldest pending connection (of `ip`, or of anyone when empty), or -1.
  auto oldestPending = [&s](const std::string* ip) {
    int oldest = -1;
    Clock::time_point at = Clock::time_point::max();
    for (const auto& [fd, p] : s.pending) {
      if ((!ip || p.ip == *ip) && p.accepted < at) {
        at = p.accepted;
        oldest = fd;
      }
    }
    return oldest;
  };

  // Reads what has arrived (after the TLS handshake, on a TLS port); answers, dispatches or waits.
  readFrom = [&](int fd) {
    auto it = s.pending.find(fd);
    if (it == s.pending.end()) return;
    Pending& p = it->second;
    if (p.lingering) {
      char sink[16384];
      for (;;) {
        const ssize_t n = ::recv(fd, sink, sizeof sink, 0);
        if (n > 0 && (p.drained += static_cast<std::size_t>(n)) < kLingerBytes) continue;
        if (n < 0 && errno == EINTR) continue;
        if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) return;
        dropPending(fd);  // end of stream, an error, or enough
        return;
      }
    }
    if (p.tls && !p.tls->established()) {
      const TlsConnection::Step step = p.tls->handshake();
      if (step == TlsConnection::Step::kFailed) {
        count(&HttpServerCounters::tlsFailed);
        log::debug("http: TLS handshake with ", p.ip, " failed: ", p.tls->failure());
        if (!p.tls->sawPlainHttp()) {
          dropPending(fd);
          return;
        }
        sendRefusal(fd, nullptr, 400, "this port speaks HTTPS only: open the address as https://", false);
        linger(fd, p);
        return;
      }
      watch(fd, p);
      if (step != TlsConnection::Step::kDone) return;
    }
    const std::size_t cap = limits_.request.maxHeaderBytes + limits_.request.maxBodyBytes + 1;
    char buf[16384];
    bool newLine = false;
    for (;;) {
      // TLS: one record per read, and OpenSSL may hold more already: read until it waits.
      const ssize_t n = p.tls ? p.tls->read(buf, sizeof buf) : ::recv(fd, buf, sizeof buf, 0);
      if (n > 0) {
        newLine = newLine || std::memchr(buf, '\n', static_cast<std::size_t>(n)) != nullptr;
        p.received.append(buf, static_cast<std::size_t>(std::min<std::size_t>(n, cap - std::min(cap, p.received.size()))));
        if (p.received.size() >= cap || (!p.tls && static_cast<std::size_t>(n) < sizeof buf)) break;
        continue;
      }
      if (n == 0) {
        dropPending(fd);  // the client gave up
        return;
      }
      if (errno == EINTR) continue;
      if (errno == EAGAIN || errno == EWOULDBLOCK) {
        watch(fd, p);
        break;
      }
      dropPending(fd);
      return;
    }
    const std::size_t size = p.received.size();
    if (p.wholeBytes != 0 ? size < p.wholeBytes
                          : !newLine && size <= limits_.request.maxHeaderBytes &&
                                (p.sawLineEnd || size <= limits_.request.maxRequestLine)) {
      return;  // nothing that could complete or refuse the request has arrived
    }
    p.sawLineEnd = p.sawLineEnd || newLine;
    HttpRequestFraming f = frameHttpRequest(p.received, limits_.request);
    if (f.state == HttpRequestFraming::State::kNeedMore) {
      p.wholeBytes = f.wholeBytes;
      if (f.expectContinue && !p.sentContinue) {
        sendSome(fd, p.tls.get(), "HTTP/1.1 100 Continue\r\n\r\n");
        p.sentContinue = true;
      }
      return;
    }
    if (f.state == HttpRequestFraming::State::kRefused) {
      count(&HttpServerCounters::refusedFraming);
      sendRefusal(fd, p.tls.get(), f.status, f.reason, false);
      linger(fd, p);
      return;
    }
    HttpJob job{fd, std::move(p.tls), std::move(f.canonical), p.ip, p.port};
    const bool slowLane = f.method == "POST" || f.method == "PATCH";
    ::epoll_ctl(s.epollFd, EPOLL_CTL_DEL, fd, nullptr);
    {
      std::lock_guard lock(s.mutex);
      ++s.inFlight;  // before push: a worker may finish it at once
    }
    const std::string ip = p.ip;
    s.pending.erase(it);
    if (!(slowLane ? s.slow : s.fast)->push(std::move(job))) {
      count(&HttpServerCounters::busy);
      sendRefusal(fd, job.tls.get(), 503, "the server is busy; try again in a second", true);
      closeConnection(fd, job.tls.get());
      s.release(ip, true);
    }
  };

  auto acceptSome = [&] {
    for (int i = 0; i < 32; ++i) {  // a batch, then the reads: a flood of connects cannot starve them
      sockaddr_storage addr{};
      socklen_t len = sizeof addr;
      const int fd = ::accept4(s.listenFd, reinterpret_cast<sockaddr*>(&addr), &len, SOCK_NONBLOCK | SOCK_CLOEXEC);
      if (fd < 0) {
        if (errno == EINTR || errno == ECONNABORTED) continue;
        if ((errno == EMFILE || errno == ENFILE) && s.spareFd >= 0) {
          // The table is full: free the spare, take the connection off the backlog, say so, close.
          count(&HttpServerCounters::descriptorsFull);
          ::close(s.spareFd);
          const int victim = ::accept4(s.listenFd, nullptr, nullptr, SOCK_NONBLOCK | SOCK_CLOEXEC);
          if (victim >= 0) {
            if (!tls_) sendRefusal(victim, nullptr, 503, "the server is out of file descriptors; try again later", true);
            ::close(victim);
          }
          s.spareFd = ::open("/dev/null", O_RDONLY | O_CLOEXEC);
          if (Clock::now() - s.lastFullLog > std::chrono::seconds(10)) {
            s.lastFullLog = Clock::now();
            log::warn("http: accept() failed: ", std::strerror(EMFILE),
                      "; refusing connections until descriptors are free (raise ulimit -n)");
          }
          continue;
        }
        return;  // EAGAIN, or an error the next readiness will repeat
      }
      Pending p;
      socketAddressText(addr, p.ip, p.port);
      p.accepted = Clock::now();
      count(&HttpServerCounters::accepted);
      std::size_t total = 0, fromIp = 0;
      {
        std::lock_guard lock(s.mutex);
        total = s.pending.size() + s.inFlight;
        auto it = s.perAddress.find(p.ip);
        fromIp = it == s.perAddress.end() ? 0 : it->second;
      }
      if (fromIp >= limits_.maxConnectionsPerAddress || total >= connectionLimit_) {
        const int victim = oldestPending(fromIp >= limits_.maxConnectionsPerAddress ? &p.ip : nullptr);
        if (victim < 0) {  // every one of them is being answered: no room for this one
          count(&HttpServerCounters::busy);
          if (!tls_) sendRefusal(fd, nullptr, 503, "too many connections; try again in a second", true);
          ::close(fd);
          continue;
        }
        count(&HttpServerCounters::evicted);
        dropPending(victim);
      }
      if (tls_) {
        try {
          p.tls = std::make_unique<TlsConnection>(*tls_, fd);
        } catch (const std::exception& e) {
          log::warn("http: ", e.what(), "; connection from ", p.ip, " closed");
          ::close(fd);
          continue;
        }
      }
      {
        std::lock_guard lock(s.mutex);
        ++s.perAddress[p.ip];
      }
      s.pending.emplace(fd, std::move(p));
      epoll_event ev{};
      ev.events = EPOLLIN | EPOLLRDHUP;
      ev.data.fd = fd;
      ::epoll_ctl(s.epollFd, EPOLL_CTL_ADD, fd, &ev);
      readFrom(fd);  // the request (plain) or the ClientHello (TLS) often came with the TCP handshake
    }
  };

  auto expire = [&] {
    const auto now = Clock::now();
    std::vector<int> late;
    for (const auto& [fd, p] : s.pending) {
      const bool started = !p.received.empty() || (p.tls && p.tls->rawBytesRead() > 0);  // a ClientHello counts
      const auto deadline = started ? limits_.requestDeadline : limits_.idleTimeout;
      if (p.lingering ? now >= p.lingerUntil : now - p.accepted >= deadline) late.push_back(fd);
    }
    for (int fd : late) {
      if (s.pending[fd].lingering) {
        dropPending(fd);
        continue;
      }
      Pending& p = s.pending[fd];
      if (!p.received.empty()) sendRefusal(fd, p.tls.get(), 408, "the request did not arrive in time", false);
      count(&HttpServerCounters::timedOut);
      dropPending(fd);
    }
  };

  bool ok = true;
  std::vector<epoll_event> events(256);
  auto lastExpire = Clock::now();
  while (!stopping_) {
    const int n = ::epoll_wait(s.epollFd, events.data(), static_cast<int>(events.size()), 50);
    if (n < 0 && errno != EINTR) {
      log::error("http: epoll_wait failed: ", std::strerror(errno));
      ok = false;
      break;
    }
    for (int i = 0; i < n; ++i) {
      const int fd = events[static_cast<std::size_t>(i)].data.fd;
      if (fd == s.wakeFd) continue;
      if (fd == s.listenFd) {
        acceptSome();
      } else {
        readFrom(fd);
      }
    }
    if (Clock::now() - lastExpire >= std::chrono::milliseconds(20)) {
      lastExpire = Clock::now();
      expire();
    }
  }
  running_ = false;
  for (auto& [fd, p] : s.pending) {
    ::close(fd);
    s.release(p.ip, false);
  }
  s.pending.clear();
  s.slow->stop();
  s.fast->stop();
  return ok;
}

}  // namespace zerohop::stream
