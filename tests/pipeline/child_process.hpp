#pragma once
// Runs a program as a child process for black-box CLI tests: captures stdout and stderr, can wait
// for a line, send a signal and wait for the exit status with a deadline.
// Thread-safety: thread-bound.

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/types.h>
#include <unistd.h>

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace zerohop::testing {

class ChildProcess {
 public:
  explicit ChildProcess(const std::vector<std::string>& argv);
  ~ChildProcess();  ///< SIGKILLs and reaps the child if it still runs
  ChildProcess(const ChildProcess&) = delete;
  ChildProcess& operator=(const ChildProcess&) = delete;

  /// Reads stdout until a line containing `needle` appears; returns that line.
  std::optional<std::string> waitForStdoutLine(const std::string& needle, std::chrono::milliseconds timeout);
  /// The same for stderr.
  std::optional<std::string> waitForStderrLine(const std::string& needle, std::chrono::milliseconds timeout);
  void signal(int sig);
  /// Exit code (or 128+signal), nullopt if it did not exit in time.
  std::optional<int> waitExit(std::chrono::milliseconds timeout);
  const std::string& stdoutText() const { return out_; }
  const std::string& stderrText() const { return err_; }

 private:
  void pump(int timeoutMs);
  std::optional<std::string> waitForLine(const std::string& text, const std::string& needle,
                                         std::chrono::milliseconds timeout);
  pid_t pid_ = -1;
  int outFd_ = -1;
  int errFd_ = -1;
  std::string out_;
  std::string err_;
  std::optional<int> status_;
};

/// Runs to completion (deadline 20 s, 60 s under a sanitizer) and returns {exit code, stdout, stderr}.
struct RunResult {
  int exitCode = -1;
  std::string out;
  std::string err;
};
RunResult run(const std::vector<std::string>& argv);

/// A loopback TCP port that was free a moment ago (bind to 0, read it back, close).
inline std::uint16_t freePort() {
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  ::bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a);
  socklen_t len = sizeof a;
  ::getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len);
  ::close(fd);
  return ntohs(a.sin_port);
}

}  // namespace zerohop::testing
