#pragma once
// The C library's own versions of the calls the shim interposes. Inside the shim library a plain
// ::read() or ::close() would bind to the shim's interposer, so emulator code that needs the real
// call on its own descriptors uses these (resolved with dlsym(RTLD_NEXT) on first use).
// Thread-safety: reentrant.

#include <poll.h>
#include <sys/types.h>

#include <cstddef>

namespace zerohop::camemu::real {

int close(int fd);
ssize_t read(int fd, void* buf, std::size_t count);
int poll(pollfd* fds, nfds_t n, int timeout);
void* mmap(void* addr, std::size_t length, int prot, int flags, int fd, off_t offset);
int ioctl(int fd, unsigned long request, void* arg);

}  // namespace zerohop::camemu::real
