#include "camemu/real_libc.hpp"

#include <dlfcn.h>
#include <sys/syscall.h>
#include <unistd.h>

namespace zerohop::camemu::real {
namespace {

template <class Fn>
Fn next(const char* name) {
  return reinterpret_cast<Fn>(dlsym(RTLD_NEXT, name));
}

}  // namespace

// close/read/ioctl go straight to the kernel: no libc state depends on them, and a syscall cannot
// recurse into the shim. poll and mmap keep libc's versions (cancellation points, mmap64 aliasing).
int close(int fd) {
  return static_cast<int>(::syscall(SYS_close, fd));
}
ssize_t read(int fd, void* buf, std::size_t count) {
  return ::syscall(SYS_read, fd, buf, count);
}
int ioctl(int fd, unsigned long request, void* arg) {
  return static_cast<int>(::syscall(SYS_ioctl, fd, request, arg));
}

int poll(pollfd* fds, nfds_t n, int timeout) {
  static auto fn = next<int (*)(pollfd*, nfds_t, int)>("poll");
  return fn(fds, n, timeout);
}

void* mmap(void* addr, std::size_t length, int prot, int flags, int fd, off_t offset) {
  static auto fn = next<void* (*)(void*, std::size_t, int, int, int, off_t)>("mmap");
  return fn(addr, length, prot, flags, fd, offset);
}

}  // namespace zerohop::camemu::real
