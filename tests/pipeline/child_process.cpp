#include "child_process.hpp"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <stdexcept>

namespace zerohop::testing {

ChildProcess::ChildProcess(const std::vector<std::string>& argv) {
  int out[2], err[2];
  if (pipe2(out, O_CLOEXEC) != 0 || pipe2(err, O_CLOEXEC) != 0) throw std::runtime_error("pipe2 failed");
  pid_ = fork();
  if (pid_ < 0) throw std::runtime_error("fork failed");
  if (pid_ == 0) {
    dup2(out[1], STDOUT_FILENO);
    dup2(err[1], STDERR_FILENO);
    std::vector<char*> args;
    for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
    args.push_back(nullptr);
    execv(args[0], args.data());
    _exit(127);
  }
  close(out[1]);
  close(err[1]);
  outFd_ = out[0];
  errFd_ = err[0];
}

ChildProcess::~ChildProcess() {
  if (!status_ && pid_ > 0) {
    kill(pid_, SIGKILL);
    int st = 0;
    waitpid(pid_, &st, 0);
  }
  if (outFd_ >= 0) close(outFd_);
  if (errFd_ >= 0) close(errFd_);
}

void ChildProcess::pump(int timeoutMs) {
  pollfd fds[2] = {{outFd_, POLLIN, 0}, {errFd_, POLLIN, 0}};
  if (poll(fds, 2, timeoutMs) <= 0) return;
  char buf[4096];
  for (int i = 0; i < 2; ++i) {
    if (fds[i].revents & (POLLIN | POLLHUP)) {
      const ssize_t n = read(fds[i].fd, buf, sizeof buf);
      if (n > 0) (i == 0 ? out_ : err_).append(buf, static_cast<std::size_t>(n));
    }
  }
}

std::optional<std::string> ChildProcess::waitForStdoutLine(const std::string& needle,
                                                           std::chrono::milliseconds timeout) {
  return waitForLine(out_, needle, timeout);
}

std::optional<std::string> ChildProcess::waitForStderrLine(const std::string& needle,
                                                           std::chrono::milliseconds timeout) {
  return waitForLine(err_, needle, timeout);
}

// `text` is out_ or err_, which pump() appends to.
std::optional<std::string> ChildProcess::waitForLine(const std::string& text, const std::string& needle,
                                                     std::chrono::milliseconds timeout) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  while (std::chrono::steady_clock::now() < deadline) {
    std::size_t start = 0;
    for (std::size_t nl; (nl = text.find('\n', start)) != std::string::npos; start = nl + 1) {
      std::string line = text.substr(start, nl - start);
      if (line.find(needle) != std::string::npos) return line;
    }
    if (waitExit(std::chrono::milliseconds(0))) return std::nullopt;
    pump(50);
  }
  return std::nullopt;
}

void ChildProcess::signal(int sig) {
  if (pid_ > 0 && !status_) kill(pid_, sig);
}

std::optional<int> ChildProcess::waitExit(std::chrono::milliseconds timeout) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  do {
    if (status_) return status_;
    int st = 0;
    if (waitpid(pid_, &st, WNOHANG) == pid_) {
      status_ = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
      for (int i = 0; i < 20; ++i) pump(0);
      return status_;
    }
    pump(20);
  } while (std::chrono::steady_clock::now() < deadline);
  return std::nullopt;
}

RunResult run(const std::vector<std::string>& argv) {
  ChildProcess child(argv);
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
  // An instrumented CLI that loads GStreamer, probes devices and leak-checks at exit has taken over 20 s
  // on two busy cores; this is a bound for a hung child, not a speed.
  auto code = child.waitExit(std::chrono::seconds(60));
#else
  auto code = child.waitExit(std::chrono::seconds(20));
#endif
  return RunResult{code.value_or(-1), child.stdoutText(), child.stderrText()};
}

}  // namespace zerohop::testing
