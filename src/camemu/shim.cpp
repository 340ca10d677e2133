// The LD_PRELOAD face of the emulated camera: interposes the C library calls V4L2 clients make
// on a device node, and routes those naming the emulated device (by path) or one of its open
// descriptors to EmulatedFile. Everything else passes straight through to the C library.
// Only the interposers are exported (the target builds with hidden visibility).
// Thread-safety: thread-safe; the descriptor table is guarded by one mutex and never held
// across a blocking call.

#include <dlfcn.h>
#include <fcntl.h>
#include <poll.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <cerrno>
#include <cstdarg>
#include <cstdio>
#include <cstring>
#include <map>
#include <memory>
#include <mutex>
#include <string>

#include "camemu/emulated_camera.hpp"
#include "camemu/emulated_file.hpp"
#include "camemu/real_libc.hpp"
#include "zerohop/error.hpp"

#define ZH_EXPORT extern "C" __attribute__((visibility("default")))

namespace zerohop::camemu {
namespace {

template <class Fn>
Fn next(const char* name) {
  return reinterpret_cast<Fn>(dlsym(RTLD_NEXT, name));
}

// Open emulated descriptors (several descriptors may name one file after dup). Thread-safe;
// shares ownership of each file with callers in the middle of a call on it.
class FileTable {
 public:
  static FileTable& instance() {
    static FileTable* table = new FileTable;  // never destroyed: clients may close() during exit
    return *table;
  }
  void add(std::shared_ptr<EmulatedFile> file) {
    std::lock_guard lock(mutex_);
    files_[file->clientFd()] = std::move(file);
  }
  /// `alias` (a dup of an emulated descriptor) now names `file` too.
  void alias(int alias, std::shared_ptr<EmulatedFile> file) {
    std::lock_guard lock(mutex_);
    files_[alias] = std::move(file);
  }
  std::shared_ptr<EmulatedFile> find(int fd) {
    if (fd < 0) return nullptr;
    std::lock_guard lock(mutex_);
    auto it = files_.find(fd);
    return it == files_.end() ? nullptr : it->second;
  }
  std::shared_ptr<EmulatedFile> remove(int fd) {
    std::lock_guard lock(mutex_);
    auto it = files_.find(fd);
    if (it == files_.end()) return nullptr;
    auto file = std::move(it->second);
    files_.erase(it);
    return file;
  }
  bool empty() {
    std::lock_guard lock(mutex_);
    return files_.empty();
  }

 private:
  std::mutex mutex_;
  std::map<int, std::shared_ptr<EmulatedFile>> files_;
};

__attribute__((noinline)) bool isDevicePath(const char* path) {
  return path && std::strncmp(path, "/dev/", 5) == 0 && EmulatedCamera::instance().matches(path);
}

int openDevice(int flags) {
  auto& camera = EmulatedCamera::instance();
  if (!camera.present()) {
    errno = ENOENT;  // unplugged: the node is gone
    return -1;
  }
  try {
    auto file = std::make_shared<EmulatedFile>(camera, flags);
    const int fd = file->clientFd();
    FileTable::instance().add(std::move(file));
    camera.trace("open -> fd %d", fd);
    return fd;
  } catch (const Error& e) {
    camera.trace("open failed: %s", e.what());
    errno = EIO;
    return -1;
  }
}

void fillStat(struct stat* st) {
  std::memset(st, 0, sizeof *st);
  st->st_mode = S_IFCHR | 0660;
  st->st_rdev = EmulatedCamera::instance().deviceNumber();
  st->st_nlink = 1;
  st->st_blksize = 4096;
}

// stat() of the device path; -1/ENOENT while unplugged.
int statDevice(struct stat* st) {
  if (!EmulatedCamera::instance().present()) {
    errno = ENOENT;
    return -1;
  }
  fillStat(st);
  return 0;
}

// The sysfs attribute clients read to learn what a character device is (v4l2-ctl and
// v4l2-compliance read /sys/dev/char/MAJ:MIN/uevent and look at DEVNAME).
std::string ueventPath() {
  const auto dev = EmulatedCamera::instance().deviceNumber();
  return "/sys/dev/char/" + std::to_string(major(dev)) + ":" + std::to_string(minor(dev)) + "/uevent";
}
std::string ueventText() {
  const auto dev = EmulatedCamera::instance().deviceNumber();
  const std::string& path = EmulatedCamera::instance().config().devicePath;
  return "MAJOR=" + std::to_string(major(dev)) + "\nMINOR=" + std::to_string(minor(dev)) +
         "\nDEVNAME=" + path.substr(5) + "\n";
}
__attribute__((noinline)) bool isUeventPath(const char* path) {
  return path && std::strncmp(path, "/sys/dev/char/81:", 17) == 0 && ueventPath() == path;
}
// A read-only descriptor holding the uevent text.
int openUevent() {
  const std::string text = ueventText();
  const int fd = memfd_create("zerohop-camemu-uevent", MFD_CLOEXEC);
  if (fd < 0) return -1;
  if (::write(fd, text.data(), text.size()) != static_cast<ssize_t>(text.size()) ||
      ::lseek(fd, 0, SEEK_SET) != 0) {
    real::close(fd);
    errno = EIO;
    return -1;
  }
  return fd;
}

int modeArgNeeded(int flags) {
  return (flags & O_CREAT) || (flags & O_TMPFILE) == O_TMPFILE;
}

}  // namespace
}  // namespace zerohop::camemu

using zerohop::camemu::EmulatedCamera;
using zerohop::camemu::FileTable;
using zerohop::camemu::isDevicePath;
using zerohop::camemu::next;
using zerohop::camemu::openDevice;

// ---- open family --------------------------------------------------------------------------------
#define ZH_OPEN_MODE(flags)                      \
  mode_t mode = 0;                               \
  if (zerohop::camemu::modeArgNeeded(flags)) {   \
    va_list ap;                                  \
    va_start(ap, flags);                         \
    mode = static_cast<mode_t>(va_arg(ap, int)); \
    va_end(ap);                                  \
  }

ZH_EXPORT int open(const char* path, int flags, ...) {
  ZH_OPEN_MODE(flags)
  if (isDevicePath(path)) return openDevice(flags);
  if (zerohop::camemu::isUeventPath(path)) return zerohop::camemu::openUevent();
  static auto fn = next<int (*)(const char*, int, ...)>("open");
  return fn(path, flags, mode);
}
ZH_EXPORT int open64(const char* path, int flags, ...) {
  ZH_OPEN_MODE(flags)
  if (isDevicePath(path)) return openDevice(flags);
  if (zerohop::camemu::isUeventPath(path)) return zerohop::camemu::openUevent();
  static auto fn = next<int (*)(const char*, int, ...)>("open64");
  return fn(path, flags, mode);
}
ZH_EXPORT int openat(int dirfd, const char* path, int flags, ...) {
  ZH_OPEN_MODE(flags)
  if (isDevicePath(path)) return openDevice(flags);
  if (zerohop::camemu::isUeventPath(path)) return zerohop::camemu::openUevent();
  static auto fn = next<int (*)(int, const char*, int, ...)>("openat");
  return fn(dirfd, path, flags, mode);
}
ZH_EXPORT int openat64(int dirfd, const char* path, int flags, ...) {
  ZH_OPEN_MODE(flags)
  if (isDevicePath(path)) return openDevice(flags);
  if (zerohop::camemu::isUeventPath(path)) return zerohop::camemu::openUevent();
  static auto fn = next<int (*)(int, const char*, int, ...)>("openat64");
  return fn(dirfd, path, flags, mode);
}
// _FORTIFY_SOURCE builds call these.
ZH_EXPORT int __open_2(const char* path, int flags) {
  if (isDevicePath(path)) return openDevice(flags);
  if (zerohop::camemu::isUeventPath(path)) return zerohop::camemu::openUevent();
  static auto fn = next<int (*)(const char*, int)>("__open_2");
  return fn(path, flags);
}
ZH_EXPORT int __open64_2(const char* path, int flags) {
  if (isDevicePath(path)) return openDevice(flags);
  if (zerohop::camemu::isUeventPath(path)) return zerohop::camemu::openUevent();
  static auto fn = next<int (*)(const char*, int)>("__open64_2");
  return fn(path, flags);
}
ZH_EXPORT int __openat_2(int dirfd, const char* path, int flags) {
  if (isDevicePath(path)) return openDevice(flags);
  if (zerohop::camemu::isUeventPath(path)) return zerohop::camemu::openUevent();
  static auto fn = next<int (*)(int, const char*, int)>("__openat_2");
  return fn(dirfd, path, flags);
}
ZH_EXPORT int __openat64_2(int dirfd, const char* path, int flags) {
  if (isDevicePath(path)) return openDevice(flags);
  if (zerohop::camemu::isUeventPath(path)) return zerohop::camemu::openUevent();
  static auto fn = next<int (*)(int, const char*, int)>("__openat64_2");
  return fn(dirfd, path, flags);
}

// ---- close, read, ioctl, mmap, poll -------------------------------------------------------------
ZH_EXPORT int close(int fd) {
  if (auto file = FileTable::instance().remove(fd)) {
    file.reset();  // stops the stream, frees the buffers
    return zerohop::camemu::real::close(fd);
  }
  static auto fn = next<int (*)(int)>("close");
  return fn(fd);
}

// ---- dup family: a duplicate names the same open file (GStreamer's buffer pool dups the fd) -------
namespace {
int noteDup(int oldFd, int newFd) {
  if (newFd >= 0) {
    if (auto file = FileTable::instance().find(oldFd)) FileTable::instance().alias(newFd, std::move(file));
  }
  return newFd;
}
}  // namespace

ZH_EXPORT int dup(int fd) {
  static auto fn = next<int (*)(int)>("dup");
  return noteDup(fd, fn(fd));
}
ZH_EXPORT int dup2(int fd, int fd2) {
  static auto fn = next<int (*)(int, int)>("dup2");
  if (fd == fd2) return fn(fd, fd2);
  const int r = fn(fd, fd2);
  if (r >= 0) FileTable::instance().remove(fd2);  // dup2 closed whatever fd2 was
  return noteDup(fd, r);
}
ZH_EXPORT int dup3(int fd, int fd2, int flags) {
  static auto fn = next<int (*)(int, int, int)>("dup3");
  const int r = fn(fd, fd2, flags);
  if (r >= 0) FileTable::instance().remove(fd2);
  return noteDup(fd, r);
}
ZH_EXPORT int fcntl(int fd, int cmd, ...) {
  va_list ap;
  va_start(ap, cmd);
  void* arg = va_arg(ap, void*);
  va_end(ap);
  static auto fn = next<int (*)(int, int, ...)>("fcntl");
  const int r = fn(fd, cmd, arg);
  return (cmd == F_DUPFD || cmd == F_DUPFD_CLOEXEC) ? noteDup(fd, r) : r;
}
ZH_EXPORT int fcntl64(int fd, int cmd, ...) {
  va_list ap;
  va_start(ap, cmd);
  void* arg = va_arg(ap, void*);
  va_end(ap);
  return fcntl(fd, cmd, arg);
}

ZH_EXPORT ssize_t read(int fd, void* buf, size_t count) {
  if (auto file = FileTable::instance().find(fd)) {
    errno = -file->read();
    return -1;
  }
  static auto fn = next<ssize_t (*)(int, void*, size_t)>("read");
  return fn(fd, buf, count);
}

ZH_EXPORT int ioctl(int fd, unsigned long request, ...) {
  va_list ap;
  va_start(ap, request);
  void* arg = va_arg(ap, void*);
  va_end(ap);
  if (auto file = FileTable::instance().find(fd)) {
    const int r = file->ioctl(request, arg);
    if (r < 0) {
      errno = -r;
      return -1;
    }
    return r;
  }
  return zerohop::camemu::real::ioctl(fd, request, arg);
}

ZH_EXPORT void* mmap(void* addr, size_t length, int prot, int flags, int fd, off_t offset) {
  if (auto file = FileTable::instance().find(fd)) return file->mmap(addr, length, prot, flags, offset);
  return zerohop::camemu::real::mmap(addr, length, prot, flags, fd, offset);
}
ZH_EXPORT void* mmap64(void* addr, size_t length, int prot, int flags, int fd, off_t offset) {
  return mmap(addr, length, prot, flags, fd, offset);
}

namespace {
// Adds the events an eventfd cannot raise (POLLERR/POLLHUP) for emulated descriptors.
int fixPoll(struct pollfd* fds, nfds_t n, int ready) {
  if (ready < 0 || FileTable::instance().empty()) return ready;
  for (nfds_t i = 0; i < n; ++i) {
    if (auto file = FileTable::instance().find(fds[i].fd)) {
      const short extra = file->extraPollEvents();
      if (extra && fds[i].revents == 0) ++ready;
      fds[i].revents |= extra;
    }
  }
  return ready;
}
// A poll that would block forever on a dead or idle emulated descriptor must return at once.
bool hasPendingErrors(struct pollfd* fds, nfds_t n) {
  if (FileTable::instance().empty()) return false;
  for (nfds_t i = 0; i < n; ++i) {
    if (auto file = FileTable::instance().find(fds[i].fd); file && file->extraPollEvents()) return true;
  }
  return false;
}
}  // namespace

ZH_EXPORT int poll(struct pollfd* fds, nfds_t n, int timeout) {
  if (hasPendingErrors(fds, n)) timeout = 0;
  return fixPoll(fds, n, zerohop::camemu::real::poll(fds, n, timeout));
}
ZH_EXPORT int ppoll(struct pollfd* fds, nfds_t n, const struct timespec* ts, const sigset_t* sigmask) {
  static auto fn = next<int (*)(struct pollfd*, nfds_t, const struct timespec*, const sigset_t*)>("ppoll");
  static const struct timespec zero { 0, 0 };
  if (hasPendingErrors(fds, n)) ts = &zero;
  return fixPoll(fds, n, fn(fds, n, ts, sigmask));
}

// ---- stat family: the device is a character device, major 81 ---------------------------------------
ZH_EXPORT int stat(const char* path, struct stat* st) {
  if (isDevicePath(path)) return zerohop::camemu::statDevice(st);
  static auto fn = next<int (*)(const char*, struct stat*)>("stat");
  return fn(path, st);
}
ZH_EXPORT int stat64(const char* path, struct stat64* st) {
  if (isDevicePath(path)) return zerohop::camemu::statDevice(reinterpret_cast<struct stat*>(st));
  static auto fn = next<int (*)(const char*, struct stat64*)>("stat64");
  return fn(path, st);
}
ZH_EXPORT int lstat(const char* path, struct stat* st) {
  if (isDevicePath(path)) return zerohop::camemu::statDevice(st);
  static auto fn = next<int (*)(const char*, struct stat*)>("lstat");
  return fn(path, st);
}
ZH_EXPORT int lstat64(const char* path, struct stat64* st) {
  if (isDevicePath(path)) return zerohop::camemu::statDevice(reinterpret_cast<struct stat*>(st));
  static auto fn = next<int (*)(const char*, struct stat64*)>("lstat64");
  return fn(path, st);
}
ZH_EXPORT int fstat(int fd, struct stat* st) {
  if (FileTable::instance().find(fd)) {
    zerohop::camemu::fillStat(st);
    return 0;
  }
  static auto fn = next<int (*)(int, struct stat*)>("fstat");
  return fn(fd, st);
}
ZH_EXPORT int fstat64(int fd, struct stat64* st) {
  return fstat(fd, reinterpret_cast<struct stat*>(st));
}
ZH_EXPORT int fstatat(int dirfd, const char* path, struct stat* st, int flags) {
  if (isDevicePath(path)) return zerohop::camemu::statDevice(st);
  if (path[0] == '\0' && (flags & AT_EMPTY_PATH) && FileTable::instance().find(dirfd)) {
    zerohop::camemu::fillStat(st);
    return 0;
  }
  static auto fn = next<int (*)(int, const char*, struct stat*, int)>("fstatat");
  return fn(dirfd, path, st, flags);
}
ZH_EXPORT int fstatat64(int dirfd, const char* path, struct stat64* st, int flags) {
  return fstatat(dirfd, path, reinterpret_cast<struct stat*>(st), flags);
}
// Binaries built against glibc < 2.33 call the versioned wrappers instead.
ZH_EXPORT int __xstat(int ver, const char* path, struct stat* st) {
  if (isDevicePath(path)) return zerohop::camemu::statDevice(st);
  static auto fn = next<int (*)(int, const char*, struct stat*)>("__xstat");
  return fn(ver, path, st);
}
ZH_EXPORT int __xstat64(int ver, const char* path, struct stat64* st) {
  return __xstat(ver, path, reinterpret_cast<struct stat*>(st));
}
ZH_EXPORT int __lxstat(int ver, const char* path, struct stat* st) {
  if (isDevicePath(path)) return zerohop::camemu::statDevice(st);
  static auto fn = next<int (*)(int, const char*, struct stat*)>("__lxstat");
  return fn(ver, path, st);
}
ZH_EXPORT int __lxstat64(int ver, const char* path, struct stat64* st) {
  return __lxstat(ver, path, reinterpret_cast<struct stat*>(st));
}
ZH_EXPORT int __fxstat(int ver, int fd, struct stat* st) {
  if (FileTable::instance().find(fd)) {
    zerohop::camemu::fillStat(st);
    return 0;
  }
  static auto fn = next<int (*)(int, int, struct stat*)>("__fxstat");
  return fn(ver, fd, st);
}
ZH_EXPORT int __fxstat64(int ver, int fd, struct stat64* st) {
  return __fxstat(ver, fd, reinterpret_cast<struct stat*>(st));
}
ZH_EXPORT int access(const char* path, int amode) {
  if (isDevicePath(path)) return EmulatedCamera::instance().present() ? 0 : (errno = ENOENT, -1);
  static auto fn = next<int (*)(const char*, int)>("access");
  return fn(path, amode);
}

// ---- stdio: std::ifstream and fopen() of the uevent file ------------------------------------------
ZH_EXPORT FILE* fopen(const char* path, const char* mode) {
  if (zerohop::camemu::isUeventPath(path)) {
    const int fd = zerohop::camemu::openUevent();
    return fd < 0 ? nullptr : fdopen(fd, "r");
  }
  static auto fn = next<FILE* (*)(const char*, const char*)>("fopen");
  return fn(path, mode);
}
ZH_EXPORT FILE* fopen64(const char* path, const char* mode) {
  if (zerohop::camemu::isUeventPath(path)) return fopen(path, mode);
  static auto fn = next<FILE* (*)(const char*, const char*)>("fopen64");
  return fn(path, mode);
}
