#pragma once
// A raw TCP client of 127.0.0.1 for the tests of hostile HTTP clients (slow, half-open, silent, never
// reading, plain text to the TLS port). Thread-safety: thread-bound.

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <string>

namespace zerohop::test {

// A connected TCP socket to 127.0.0.1:port; closes on destruction. `rcvbuf` > 0 shrinks its receive
// buffer before connecting (a client that reads slowly, or not at all).
class RawClient {
 public:
  explicit RawClient(int port, int rcvbuf = 0) {
    fd_ = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (rcvbuf > 0) ::setsockopt(fd_, SOL_SOCKET, SO_RCVBUF, &rcvbuf, sizeof rcvbuf);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_port = htons(static_cast<std::uint16_t>(port));
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    connected_ = ::connect(fd_, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0;
  }
  ~RawClient() {
    if (fd_ >= 0) ::close(fd_);
  }
  RawClient(const RawClient&) = delete;
  RawClient& operator=(const RawClient&) = delete;

  bool connected() const { return connected_; }
  const std::string& received() const { return received_; }
  bool send(const std::string& s) {
    return ::send(fd_, s.data(), s.size(), MSG_NOSIGNAL) == ssize_t(s.size());
  }

  /// True while the server has not closed the connection (looks without waiting or consuming data).
  bool stillOpen() {
    char b;
    pollfd p{fd_, POLLIN, 0};
    if (::poll(&p, 1, 0) <= 0) return true;
    const ssize_t n = ::recv(fd_, &b, 1, MSG_PEEK | MSG_DONTWAIT);
    return n > 0 || (n < 0 && (errno == EAGAIN || errno == EINTR));
  }

  /// Reads until the server closes the connection (keeping the first 4 KiB, see received()); false
  /// if it is still open at `until`.
  bool closedByServerBefore(std::chrono::steady_clock::time_point until) {
    using std::chrono::steady_clock;
    char buf[65536];
    for (;;) {
      const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(until - steady_clock::now()).count();
      if (left <= 0) return false;
      pollfd p{fd_, POLLIN, 0};
      if (::poll(&p, 1, static_cast<int>(left)) <= 0) continue;
      const ssize_t n = ::recv(fd_, buf, sizeof buf, 0);
      if (n > 0 && received_.size() < 4096) received_.append(buf, static_cast<std::size_t>(n));
      if (n == 0 || (n < 0 && errno != EINTR && errno != EAGAIN)) return true;
    }
  }

 private:
  int fd_ = -1;
  bool connected_ = false;
  std::string received_;
};

}  // namespace zerohop::test
