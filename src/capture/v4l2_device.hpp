#pragma once
// An open V4L2 device node and the one way this library calls ioctl on it: retried on EINTR,
// failures thrown as zerohop::Error naming the request and the node.
// Thread-safety: thread-safe for ioctl() (the kernel serialises); the object itself is move-only.

#include <string>

#include "core/unique_fd.hpp"

namespace zerohop::capture_detail {

class V4l2Device {
 public:
  /// open(path, O_RDWR | O_NONBLOCK | O_CLOEXEC). Throws Error (kNotFound for a missing node,
  /// kUnavailable for EBUSY/ENODEV).
  static V4l2Device open(const std::string& path);

  V4l2Device(V4l2Device&&) noexcept = default;
  V4l2Device& operator=(V4l2Device&&) noexcept = default;

  int fd() const noexcept { return fd_.get(); }
  const std::string& path() const noexcept { return path_; }

  /// ioctl, retried on EINTR; returns 0 or the errno (never throws).
  int tryIoctl(unsigned long request, void* arg) const noexcept;
  /// ioctl, retried on EINTR; throws Error naming `name` (e.g. "VIDIOC_S_FMT") and the node.
  void ioctl(unsigned long request, void* arg, const char* name) const;
  /// Throws the Error for a failed call `name` with `err`: a vanished camera (ENODEV, or EIO with
  /// the node gone) becomes kUnavailable "disconnected".
  [[noreturn]] void fail(const char* name, int err) const;

 private:
  V4l2Device(UniqueFd fd, std::string path) noexcept : fd_(std::move(fd)), path_(std::move(path)) {}
  UniqueFd fd_;
  std::string path_;
};

}  // namespace zerohop::capture_detail
