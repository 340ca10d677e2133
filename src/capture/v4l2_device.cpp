#include "capture/v4l2_device.hpp"

#include <fcntl.h>
#include <sys/ioctl.h>
#include <sys/stat.h>

#include <cerrno>
#include <cstring>

#include "zerohop/error.hpp"

namespace zerohop::capture_detail {

V4l2Device V4l2Device::open(const std::string& path) {
  const int fd = ::open(path.c_str(), O_RDWR | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0) {
    const int err = errno;
    if (err == ENOENT) {
      throw Error(Errc::kNotFound, "open(" + path +
                                       ") failed: no such device node (is the camera plugged in? "
                                       "`zerohop probe` lists cameras)");
    }
    throwErrno("open", err, path);
  }
  return V4l2Device(UniqueFd(fd), path);
}

int V4l2Device::tryIoctl(unsigned long request, void* arg) const noexcept {
  for (;;) {
    if (::ioctl(fd_.get(), request, arg) == 0) return 0;
    if (errno != EINTR) return errno;
  }
}

void V4l2Device::ioctl(unsigned long request, void* arg, const char* name) const {
  if (const int err = tryIoctl(request, arg); err != 0) fail(name, err);
}

void V4l2Device::fail(const char* name, int err) const {
  struct stat st {};
  const bool gone = err == ENODEV || (err == EIO && ::stat(path_.c_str(), &st) != 0);
  if (gone) {
    throw Error(Errc::kUnavailable, std::string(name) + "(" + path_ + ") failed: " + std::strerror(err) +
                                        ": the camera was disconnected");
  }
  throwErrno(name, err, path_);
}

}  // namespace zerohop::capture_detail
