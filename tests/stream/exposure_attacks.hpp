#pragma once
// Hostile HTTP clients for the exposure tests (issue 22): raw TCP connections from a chosen loopback
// source address, a /stats prober that records its latencies, and the process's RSS. Every wait is
// bounded; nothing here sleeps for a result.

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace zerohop::test {

using Clock = std::chrono::steady_clock;

/// A TCP connection to 127.0.0.1:port from `source` (any 127.x.y.z: all of 127/8 is loopback).
class AttackConn {
 public:
  AttackConn(int port, const char* source = "127.0.0.1", bool nonBlocking = false) {
    fd_ = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC | (nonBlocking ? SOCK_NONBLOCK : 0), 0);
    if (fd_ < 0) return;
    sockaddr_in from{};
    from.sin_family = AF_INET;
    ::inet_pton(AF_INET, source, &from.sin_addr);
    ::bind(fd_, reinterpret_cast<sockaddr*>(&from), sizeof from);
    sockaddr_in to{};
    to.sin_family = AF_INET;
    to.sin_port = htons(static_cast<std::uint16_t>(port));
    to.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    const int r = ::connect(fd_, reinterpret_cast<sockaddr*>(&to), sizeof to);
    connected_ = r == 0 || (nonBlocking && errno == EINPROGRESS);
  }
  ~AttackConn() {
    if (fd_ >= 0) ::close(fd_);
  }
  AttackConn(const AttackConn&) = delete;
  AttackConn& operator=(const AttackConn&) = delete;

  bool connected() const { return connected_; }
  bool send(const std::string& s) {
    std::size_t sent = 0;
    while (sent < s.size()) {
      const ssize_t n = ::send(fd_, s.data() + sent, s.size() - sent, MSG_NOSIGNAL);
      if (n <= 0) return false;
      sent += static_cast<std::size_t>(n);
    }
    return true;
  }
  /// One byte without blocking (slowloris); false when the connection is gone.
  bool trickle(char c) { return ::send(fd_, &c, 1, MSG_NOSIGNAL | MSG_DONTWAIT) == 1 || errno == EAGAIN; }
  /// Everything the server sends until it closes or `timeout` passes.
  std::string readAll(std::chrono::milliseconds timeout) {
    std::string out;
    const auto until = Clock::now() + timeout;
    char buf[65536];
    for (;;) {
      const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(until - Clock::now()).count();
      if (left <= 0) return out;
      pollfd p{fd_, POLLIN, 0};
      if (::poll(&p, 1, static_cast<int>(left)) <= 0) continue;
      const ssize_t n = ::recv(fd_, buf, sizeof buf, 0);
      if (n <= 0) return out;
      out.append(buf, static_cast<std::size_t>(n));
    }
  }
  /// The status of the first response line, or 0.
  static int status(const std::string& response) {
    return response.rfind("HTTP/1.1 ", 0) == 0 ? std::atoi(response.c_str() + 9) : 0;
  }

 private:
  int fd_ = -1;
  bool connected_ = false;
};

/// GET /stats every 200 ms from 127.0.0.3 on its own thread; each answer's latency (a failed or
/// unanswered probe counts as its 2 s timeout).
class StatsProbe {
 public:
  explicit StatsProbe(int port) : thread_([this, port] {
    while (!stop_) {
      const auto t0 = Clock::now();
      AttackConn c(port, "127.0.0.3");
      const bool ok = c.connected() && c.send("GET /stats HTTP/1.1\r\nHost: x\r\n\r\n") &&
                      AttackConn::status(c.readAll(std::chrono::milliseconds(2000))) == 200;
      const double s = ok ? std::chrono::duration<double>(Clock::now() - t0).count() : 2.0;
      {
        std::lock_guard lock(mutex_);
        latencies_.push_back(s);
        failures_ += ok ? 0 : 1;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(200));
    }
  }) {}
  ~StatsProbe() { stop(); }
  void stop() {
    stop_ = true;
    if (thread_.joinable()) thread_.join();
  }
  double p99() {
    std::lock_guard lock(mutex_);
    if (latencies_.empty()) return 99;
    std::vector<double> v = latencies_;
    std::sort(v.begin(), v.end());
    return v[std::min(v.size() - 1, v.size() * 99 / 100)];
  }
  int failures() {
    std::lock_guard lock(mutex_);
    return failures_;
  }
  std::size_t count() {
    std::lock_guard lock(mutex_);
    return latencies_.size();
  }

 private:
  std::atomic<bool> stop_{false};
  std::mutex mutex_;
  std::vector<double> latencies_;
  int failures_ = 0;
  std::thread thread_;
};

/// This process's resident set, in KiB.
inline long rssKiB() {
  std::ifstream status("/proc/self/status");
  std::string line;
  while (std::getline(status, line)) {
    if (line.rfind("VmRSS:", 0) == 0) return std::atol(line.c_str() + 6);
  }
  return 0;
}

}  // namespace zerohop::test
