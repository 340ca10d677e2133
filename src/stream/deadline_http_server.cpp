#include "stream/deadline_http_server.hpp"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstring>
#include <optional>
#include <string>

namespace zerohop::stream {
namespace {

using Clock = std::chrono::steady_clock;

void ipAndPort(const sockaddr_storage& addr, std::string& ip, int& port) {
  char text[INET6_ADDRSTRLEN] = {};
  if (addr.ss_family == AF_INET) {
    const auto& a = reinterpret_cast<const sockaddr_in&>(addr);
    inet_ntop(AF_INET, &a.sin_addr, text, sizeof text);
    port = ntohs(a.sin_port);
  } else if (addr.ss_family == AF_INET6) {
    const auto& a = reinterpret_cast<const sockaddr_in6&>(addr);
    inet_ntop(AF_INET6, &a.sin6_addr, text, sizeof text);
    port = ntohs(a.sin6_port);
  }
  ip = text;
}

// One connection's socket as an httplib::Stream; reads and writes give up at their deadline, or
// within kStopCheck once the server stops (its listening socket is then INVALID_SOCKET).
class DeadlineStream final : public httplib::Stream {
 public:
  static constexpr std::chrono::milliseconds kStopCheck{100};

  DeadlineStream(int fd, std::chrono::milliseconds responseDeadline, const std::atomic<socket_t>& listening)
      : fd_(fd), responseDeadline_(responseDeadline), listening_(listening) {}

  /// The next request must be complete by `deadline`; the response clock starts at its first write.
  void startRequest(Clock::time_point deadline) {
    readDeadline_ = deadline;
    writeDeadline_.reset();
  }

  /// Bytes of a pipelined next request already read from the socket.
  bool hasBuffered() const { return bufPos_ < bufLen_; }

  bool is_readable() const override { return hasBuffered() || wait(POLLIN, readDeadline_); }
  bool is_writable() const override {
    return wait(POLLOUT, writeDeadline_.value_or(Clock::now() + responseDeadline_));
  }

  // Buffered: httplib reads the request line and headers one byte at a time.
  ssize_t read(char* ptr, size_t size) override {
    if (!hasBuffered()) {
      if (!wait(POLLIN, readDeadline_)) return -1;
      ssize_t n;
      do n = ::recv(fd_, buf_, sizeof buf_, 0);
      while (n < 0 && errno == EINTR);
      if (n <= 0) return n;
      bufPos_ = 0;
      bufLen_ = static_cast<std::size_t>(n);
    }
    const std::size_t n = std::min(size, bufLen_ - bufPos_);
    std::memcpy(ptr, buf_ + bufPos_, n);
    bufPos_ += n;
    return static_cast<ssize_t>(n);
  }

  ssize_t write(const char* ptr, size_t size) override {
    if (!writeDeadline_) writeDeadline_ = Clock::now() + responseDeadline_;
    if (!wait(POLLOUT, *writeDeadline_)) return -1;
    ssize_t n;
    do n = ::send(fd_, ptr, size, MSG_NOSIGNAL);
    while (n < 0 && errno == EINTR);
    return n;
  }

  void get_remote_ip_and_port(std::string& ip, int& port) const override {
    sockaddr_storage addr{};
    socklen_t len = sizeof addr;
    if (::getpeername(fd_, reinterpret_cast<sockaddr*>(&addr), &len) == 0) ipAndPort(addr, ip, port);
  }
  void get_local_ip_and_port(std::string& ip, int& port) const override {
    sockaddr_storage addr{};
    socklen_t len = sizeof addr;
    if (::getsockname(fd_, reinterpret_cast<sockaddr*>(&addr), &len) == 0) ipAndPort(addr, ip, port);
  }
  socket_t socket() const override { return fd_; }

 private:
  bool wait(short events, Clock::time_point deadline) const {
    for (;;) {
      const auto left = std::chrono::ceil<std::chrono::milliseconds>(deadline - Clock::now());
      if (left.count() <= 0 || listening_.load() == INVALID_SOCKET) return false;
      pollfd p{fd_, events, 0};
      const int r = ::poll(&p, 1, static_cast<int>(std::min(left, kStopCheck).count()));
      if (r > 0) return true;
      if (r < 0 && errno != EINTR) return false;
    }
  }

  const int fd_;
  const std::chrono::milliseconds responseDeadline_;
  const std::atomic<socket_t>& listening_;
  Clock::time_point readDeadline_{};
  std::optional<Clock::time_point> writeDeadline_;
  char buf_[4096];
  std::size_t bufPos_ = 0;
  std::size_t bufLen_ = 0;
};

}  // namespace

DeadlineHttpServer::DeadlineHttpServer(std::chrono::milliseconds requestDeadline,
                                       std::chrono::milliseconds responseDeadline, std::size_t workers)
    : requestDeadline_(requestDeadline), responseDeadline_(responseDeadline) {
  new_task_queue = [workers] { return new httplib::ThreadPool(workers); };
}

bool DeadlineHttpServer::process_and_close_socket(socket_t sock) {
  DeadlineStream stream(sock, responseDeadline_, svr_sock_);
  bool ok = true;
  for (std::size_t served = 0; served < keep_alive_max_count_ && ok; ++served) {
    if (served > 0) {
      // Another request only if it is on its way already (keep_alive_timeout_sec_, 0 here by default).
      pollfd p{sock, POLLIN, 0};
      if (svr_sock_ == INVALID_SOCKET ||
          (!stream.hasBuffered() && ::poll(&p, 1, static_cast<int>(keep_alive_timeout_sec_ * 1000)) <= 0))
        break;
    }
    stream.startRequest(Clock::now() + requestDeadline_);
    bool closed = false;
    const bool last = served + 1 == keep_alive_max_count_ || svr_sock_ == INVALID_SOCKET;
    ok = process_request(stream, last, closed, {});
    if (closed) break;
  }
  ::shutdown(sock, SHUT_RDWR);
  ::close(sock);
  return ok;
}

}  // namespace zerohop::stream
