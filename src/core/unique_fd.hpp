#pragma once
// Move-only owner of one file descriptor (a device node, memfd, socket, eventfd).
// Thread-safety: thread-bound (a value type); closing happens in the destructor or reset().

#include <utility>

namespace zerohop {

class UniqueFd {
 public:
  UniqueFd() noexcept = default;
  explicit UniqueFd(int fd) noexcept : fd_(fd) {}
  UniqueFd(const UniqueFd&) = delete;
  UniqueFd& operator=(const UniqueFd&) = delete;
  UniqueFd(UniqueFd&& other) noexcept : fd_(other.fd_) { other.fd_ = -1; }
  UniqueFd& operator=(UniqueFd&& other) noexcept {
    if (this != &other) {
      reset();
      fd_ = std::exchange(other.fd_, -1);
    }
    return *this;
  }
  ~UniqueFd() { reset(); }

  int get() const noexcept { return fd_; }
  bool valid() const noexcept { return fd_ >= 0; }
  explicit operator bool() const noexcept { return valid(); }
  /// Gives up ownership; the caller must close the returned descriptor.
  [[nodiscard]] int release() noexcept { return std::exchange(fd_, -1); }
  /// Closes the descriptor now (idempotent); a failing close() is logged, never thrown.
  void reset(int fd = -1) noexcept;

 private:
  int fd_ = -1;
};

}  // namespace zerohop
