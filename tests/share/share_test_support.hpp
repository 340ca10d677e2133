#pragma once
// Shared by the share tests and their helper process: the content pattern (derived from the frame
// sequence, so every reader can check every byte) and a child-process handle with pipes.
// Thread-safety: Child is thread-bound.

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <exception>
#include <filesystem>
#include <functional>
#include <optional>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "zerohop/frame.hpp"
#include "zerohop/pixel_format.hpp"

extern char** environ;

namespace zerohop::share_test {

inline std::uint8_t patternByte(std::uint64_t sequence, std::size_t plane, std::size_t offset) {
  return static_cast<std::uint8_t>((sequence * 7 + plane * 101 + offset * 13 + (offset >> 9)) & 0xFF);
}

/// The ring layout every image test uses: small, two planes, padded pitch (exercises pitches).
inline ImageLayout testLayout() {
  return computeLayout(PixelFormat::kNV12, 96, 48, 128);
}

// Pattern bytes are written and read as relaxed atomics: in-process readers read a slot while the
// publisher may be overwriting it (an overrun, which the seqlock then reports). Plain accesses would be
// a data race by the C++ memory model (TSan says so); relaxed byte atomics are plain moves on x86 and
// keep TSan's eyes on the ring's own synchronisation.
inline void storePatternByte(std::uint8_t* p, std::uint8_t v) {
  std::atomic_ref<std::uint8_t>(*p).store(v, std::memory_order_relaxed);
}
inline std::uint8_t loadPatternByte(std::uint8_t* p) {
  return std::atomic_ref<std::uint8_t>(*p).load(std::memory_order_relaxed);
}

/// Fills every meaningful byte of every plane of `f` (host memory) from its sequence.
inline void fillPattern(Frame& f, const ImageLayout& l) {
  for (std::uint32_t p = 0; p < l.planeCount; ++p) {
    for (std::uint32_t r = 0; r < l.planes[p].rows; ++r) {
      for (std::uint32_t x = 0; x < l.planes[p].widthBytes; ++x) {
        storePatternByte(&f.data[p][std::size_t{r} * f.pitch[p] + x],
                         patternByte(f.sequence, p, std::size_t{r} * l.planes[p].widthBytes + x));
      }
    }
  }
}

/// Returns the first mismatch as text, or an empty string when every byte matches.
inline std::string checkPattern(const Frame& f, const ImageLayout& l) {
  if (f.planeCount != l.planeCount) return "plane count " + std::to_string(f.planeCount);
  for (std::uint32_t p = 0; p < l.planeCount; ++p) {
    for (std::uint32_t r = 0; r < l.planes[p].rows; ++r) {
      for (std::uint32_t x = 0; x < l.planes[p].widthBytes; ++x) {
        const auto want = patternByte(f.sequence, p, std::size_t{r} * l.planes[p].widthBytes + x);
        const auto got = loadPatternByte(&f.data[p][std::size_t{r} * f.pitch[p] + x]);
        if (got != want) {
          return "seq " + std::to_string(f.sequence) + " plane " + std::to_string(p) + " row " +
                 std::to_string(r) + " byte " + std::to_string(x) + ": got " + std::to_string(got) +
                 " want " + std::to_string(want);
        }
      }
    }
  }
  return {};
}

/// Encoded-unit stand-in: size, keyframe flag and bytes all derived from the sequence.
inline std::size_t unitSize(std::uint64_t seq) {
  return 100 + (seq * 997) % 6000;
}
inline bool unitKeyframe(std::uint64_t seq) {
  return seq % 10 == 0;
}

/// Runs `body(i)` for i in [0, count) on one thread each and joins them: each thread's exception
/// text, "" where it returned normally.
inline std::vector<std::string> runThreads(int count, const std::function<void(int)>& body) {
  std::vector<std::string> errors(static_cast<std::size_t>(count));
  std::vector<std::thread> threads;
  for (int i = 0; i < count; ++i) {
    threads.emplace_back([&, i] {
      try {
        body(i);
      } catch (const std::exception& e) {
        errors[static_cast<std::size_t>(i)] = e.what();
      }
    });
  }
  for (auto& t : threads) t.join();
  return errors;
}

/// A private share directory (mkdtemp under /tmp), removed with everything in it on destruction.
class ShareDirectory {
 public:
  ShareDirectory() {
    std::string tmpl = "/tmp/zerohop-share-test-XXXXXX";
    if (!::mkdtemp(tmpl.data())) throw std::runtime_error("mkdtemp failed");
    path_ = tmpl;
  }
  ~ShareDirectory() {
    std::error_code ignored;
    std::filesystem::remove_all(path_, ignored);
  }
  ShareDirectory(const ShareDirectory&) = delete;
  ShareDirectory& operator=(const ShareDirectory&) = delete;
  const std::string& path() const noexcept { return path_; }

 private:
  std::string path_;
};

/// A child process started with posix_spawn, stdin/stdout piped. Killed (SIGKILL) and reaped on destruction.
class Child {
 public:
  explicit Child(const std::vector<std::string>& argv) {
    int in[2], out[2];
    if (::pipe2(in, O_CLOEXEC) != 0 || ::pipe2(out, O_CLOEXEC) != 0) throw std::runtime_error("pipe2 failed");
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_adddup2(&fa, in[0], 0);
    posix_spawn_file_actions_adddup2(&fa, out[1], 1);
    std::vector<char*> args;
    for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
    args.push_back(nullptr);
    const int rc = ::posix_spawn(&pid_, args[0], &fa, nullptr, args.data(), environ);
    posix_spawn_file_actions_destroy(&fa);
    ::close(in[0]);
    ::close(out[1]);
    stdin_ = in[1];
    stdout_ = out[0];
    if (rc != 0) throw std::runtime_error("posix_spawn " + argv[0] + " failed: " + std::to_string(rc));
  }
  Child(const Child&) = delete;
  Child& operator=(const Child&) = delete;
  ~Child() {
    if (pid_ > 0) {
      ::kill(pid_, SIGKILL);
      ::waitpid(pid_, nullptr, 0);
    }
    if (stdin_ >= 0) ::close(stdin_);
    if (stdout_ >= 0) ::close(stdout_);
  }

  pid_t pid() const { return pid_; }

  /// Next line of the child's stdout, nullopt on EOF or after `limit` (a hang guard, not a speed check).
  std::optional<std::string> readLine(std::chrono::milliseconds limit = std::chrono::seconds(20)) {
    const auto deadline = std::chrono::steady_clock::now() + limit;
    for (;;) {
      if (auto nl = buffer_.find('\n'); nl != std::string::npos) {
        std::string line = buffer_.substr(0, nl);
        buffer_.erase(0, nl + 1);
        return line;
      }
      const auto left =
          std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
      if (left.count() <= 0) return std::nullopt;
      pollfd p{stdout_, POLLIN, 0};
      if (::poll(&p, 1, static_cast<int>(left.count())) <= 0) continue;
      char buf[512];
      const ssize_t n = ::read(stdout_, buf, sizeof buf);
      if (n <= 0) return std::nullopt;
      buffer_.append(buf, static_cast<std::size_t>(n));
    }
  }

  void writeLine(const std::string& line) {
    const std::string s = line + "\n";
    if (::write(stdin_, s.data(), s.size()) != static_cast<ssize_t>(s.size()))
      throw std::runtime_error("write to child failed");
  }

  /// Sends SIGKILL and reaps the child.
  void kill() {
    if (pid_ <= 0) return;
    ::kill(pid_, SIGKILL);
    ::waitpid(pid_, nullptr, 0);
    pid_ = -1;
  }

  /// What wait() returns for a child still running at its limit (which it then kills).
  static constexpr int kStillRunning = -2;

  /// Waits up to `limit` for the child to exit; returns its exit status (or 128+signal), or
  /// kStillRunning after killing a child that hung (a hang guard: the test fails instead of hanging).
  int wait(std::chrono::milliseconds limit = std::chrono::seconds(30)) {
    const auto deadline = std::chrono::steady_clock::now() + limit;
    int status = 0;
    for (;;) {
      const pid_t r = ::waitpid(pid_, &status, WNOHANG);
      if (r == pid_) break;
      if (r < 0) {
        pid_ = -1;
        return -1;
      }
      if (std::chrono::steady_clock::now() >= deadline) {
        kill();
        return kStillRunning;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
    pid_ = -1;
    if (WIFEXITED(status)) return WEXITSTATUS(status);
    if (WIFSIGNALED(status)) return 128 + WTERMSIG(status);
    return -1;
  }

  /// Non-blocking: exit status once the child has exited.
  std::optional<int> tryWait() {
    int status = 0;
    if (::waitpid(pid_, &status, WNOHANG) != pid_) return std::nullopt;
    pid_ = -1;
    if (WIFEXITED(status)) return WEXITSTATUS(status);
    if (WIFSIGNALED(status)) return 128 + WTERMSIG(status);
    return -1;
  }

 private:
  pid_t pid_ = -1;
  int stdin_ = -1;
  int stdout_ = -1;
  std::string buffer_;
};

}  // namespace zerohop::share_test
