#pragma once
// The httplib::Stream a DeadlineHttpServer worker serves one request through: reads come from the
// request's canonical bytes (already read and checked by the accept thread), writes go to the socket
// (or its TLS connection) without blocking past the response deadline, and give up when the server stops.
// Thread-safety: thread-bound (the worker serving the request).

#include <httplib.h>
#include <poll.h>
#include <sys/socket.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <optional>
#include <string>

#include "stream/tls_context.hpp"

namespace zerohop::stream {

/// The numeric address and port of `addr` (IPv4 or IPv6); ip empty for another family.
void socketAddressText(const sockaddr_storage& addr, std::string& ip, int& port);

class CheckedRequestStream final : public httplib::Stream {
 public:
  using Clock = std::chrono::steady_clock;
  static constexpr std::chrono::milliseconds kStopCheck{100};  // how often a blocked write looks at `stopping`

  CheckedRequestStream(int fd, TlsConnection* tls, const std::string& request, std::string ip, int port,
                       std::chrono::milliseconds responseDeadline, const std::atomic<bool>& stopping)
      : fd_(fd), tls_(tls), request_(request), ip_(std::move(ip)), port_(port), responseDeadline_(responseDeadline),
        stopping_(stopping) {}

  bool is_readable() const override { return pos_ < request_.size(); }
  bool is_writable() const override { return wait(POLLOUT); }

  ssize_t read(char* ptr, size_t size) override {
    const std::size_t n = std::min(size, request_.size() - pos_);
    std::memcpy(ptr, request_.data() + pos_, n);
    pos_ += n;
    return static_cast<ssize_t>(n);
  }

  ssize_t write(const char* ptr, size_t size) override {
    if (!writeDeadline_) writeDeadline_ = Clock::now() + responseDeadline_;
    for (;;) {
      const ssize_t n = tls_ ? tls_->write(ptr, size) : ::send(fd_, ptr, size, MSG_NOSIGNAL | MSG_DONTWAIT);
      if (n > 0 || (n == 0 && !tls_)) return n;
      if (n == 0) return -1;  // close_notify from the client: nothing more can be written
      if (errno == EINTR) continue;
      if (errno != EAGAIN && errno != EWOULDBLOCK) return -1;
      if (!wait(tls_ && !tls_->wantsWrite() ? POLLIN : POLLOUT)) return -1;
    }
  }

  void get_remote_ip_and_port(std::string& ip, int& port) const override {
    ip = ip_;
    port = port_;
  }
  void get_local_ip_and_port(std::string& ip, int& port) const override {
    sockaddr_storage addr{};
    socklen_t len = sizeof addr;
    if (::getsockname(fd_, reinterpret_cast<sockaddr*>(&addr), &len) == 0) socketAddressText(addr, ip, port);
  }
  socket_t socket() const override { return fd_; }

 private:
  bool wait(short events) const {
    const Clock::time_point deadline = writeDeadline_.value_or(Clock::now() + responseDeadline_);
    for (;;) {
      const auto left = std::chrono::ceil<std::chrono::milliseconds>(deadline - Clock::now());
      if (left.count() <= 0 || stopping_.load()) return false;
      pollfd p{fd_, events, 0};
      const int r = ::poll(&p, 1, static_cast<int>(std::min(left, kStopCheck).count()));
      if (r > 0) return (p.revents & (POLLERR | POLLHUP | POLLNVAL)) == 0 || (p.revents & events) != 0;
      if (r < 0 && errno != EINTR) return false;
    }
  }

  const int fd_;
  TlsConnection* const tls_;  // null: plain HTTP
  const std::string& request_;
  std::size_t pos_ = 0;
  const std::string ip_;
  const int port_;
  const std::chrono::milliseconds responseDeadline_;
  const std::atomic<bool>& stopping_;
  std::optional<Clock::time_point> writeDeadline_;
};

}  // namespace zerohop::stream
