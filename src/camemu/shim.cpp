// The LD_PRELOAD face of the emulated cameras: interposes the C library calls V4L2 clients make
// on a device node, and routes those naming an emulated device (by path, looked up in the
// CameraRig) or one of its open descriptors to EmulatedFile (which knows its camera). Everything else passes
// straight through to the C library. Only the interposers are exported (the target builds with hidden
// visibility). Thread-safety: thread-safe; the descriptor table is guarded by one mutex and never held across
// a blocking call.

#include <dirent.h>
#include <dlfcn.h>
#include <fcntl.h>
#include <poll.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstdarg>
#include <cstdio>
#include <cstring>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

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

// The camera whose device node `path` names, or nullptr.
__attribute__((noinline)) EmulatedCamera* cameraAt(const char* path) {
  if (!path || std::strncmp(path, "/dev/", 5) != 0) return nullptr;
  return CameraRig::instance().find(path);
}

int openDevice(EmulatedCamera& camera, int flags) {
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

void fillStat(const EmulatedCamera& camera, struct stat* st) {
  std::memset(st, 0, sizeof *st);
  st->st_mode = S_IFCHR | 0660;
  st->st_rdev = camera.deviceNumber();
  st->st_nlink = 1;
  st->st_blksize = 4096;
}

// stat() of a device path; -1/ENOENT while unplugged.
int statDevice(const EmulatedCamera& camera, struct stat* st) {
  if (!camera.present()) {
    errno = ENOENT;
    return -1;
  }
  fillStat(camera, st);
  return 0;
}

// The sysfs attribute clients read to learn what a character device is (v4l2-ctl and
// v4l2-compliance read /sys/dev/char/MAJ:MIN/uevent and look at DEVNAME).
std::string ueventPath(const EmulatedCamera& camera) {
  const auto dev = camera.deviceNumber();
  return "/sys/dev/char/" + std::to_string(major(dev)) + ":" + std::to_string(minor(dev)) + "/uevent";
}
std::string ueventText(const EmulatedCamera& camera) {
  const auto dev = camera.deviceNumber();
  const std::string& path = camera.config().devicePath;
  return "MAJOR=" + std::to_string(major(dev)) + "\nMINOR=" + std::to_string(minor(dev)) +
         "\nDEVNAME=" + path.substr(5) + "\n";
}
// The camera whose uevent file `path` is, or nullptr.
__attribute__((noinline)) const EmulatedCamera* ueventCamera(const char* path) {
  if (!path || std::strncmp(path, "/sys/dev/char/81:", 17) != 0) return nullptr;
  for (const auto& camera : CameraRig::instance().cameras()) {
    if (ueventPath(*camera) == path) return camera.get();
  }
  return nullptr;
}
// A read-only descriptor holding the uevent text.
int openUevent(const EmulatedCamera& camera) {
  const std::string text = ueventText(camera);
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

// Listings of /dev (opendir/readdir: v4l2-ctl --list-devices) carry the present cameras' nodes
// after the real entries. Thread-safe; one entry of storage per open listing, as readdir's.
class DevListings {
 public:
  static DevListings& instance() {
    static DevListings* listings = new DevListings;  // never destroyed
    return *listings;
  }
  static bool isDev(const char* path) {
    return path && (std::strcmp(path, "/dev") == 0 || std::strcmp(path, "/dev/") == 0);
  }
  void track(DIR* dir) {
    Listing listing;
    for (const auto& camera : CameraRig::instance().cameras()) {
      const std::string& path = camera->config().devicePath;
      if (camera->present() && path.find('/', 5) == std::string::npos)
        listing.names.push_back(path.substr(5));
    }
    std::lock_guard lock(mutex_);
    listings_[dir] = std::move(listing);
    any_.store(true);
  }
  /// rewinddir(): a tracked listing starts again with every camera.
  void rewind(DIR* dir) {
    if (!any_.load()) return;
    {
      std::lock_guard lock(mutex_);
      if (!listings_.count(dir)) return;
    }
    track(dir);
  }
  void forget(DIR* dir) {
    if (!any_.load()) return;
    std::lock_guard lock(mutex_);
    listings_.erase(dir);
  }
  /// After the real readdir gave `real` (nullptr: the end): what the client sees.
  template <class Dirent>
  Dirent* next(DIR* dir, Dirent* real) {
    if (!any_.load()) return real;
    std::lock_guard lock(mutex_);
    auto it = listings_.find(dir);
    if (it == listings_.end()) return real;
    Listing& l = it->second;
    if (real) {  // a real node of that name wins over ours
      std::erase(l.names, std::string(real->d_name));
      return real;
    }
    if (l.names.empty()) return nullptr;
    Dirent* entry = reinterpret_cast<Dirent*>(&l.entry);
    std::memset(entry, 0, sizeof(Dirent));
    entry->d_ino = 0x7a680000u + static_cast<unsigned>(l.names.size());
    entry->d_reclen = sizeof(Dirent);
    entry->d_type = DT_CHR;
    std::snprintf(entry->d_name, sizeof entry->d_name, "%s", l.names.front().c_str());
    l.names.erase(l.names.begin());
    return entry;
  }

 private:
  struct Listing {
    std::vector<std::string> names;  // still to be listed
    struct dirent64 entry {};        // what readdir returned last (dirent and dirent64 both fit)
  };
  static_assert(sizeof(struct dirent) <= sizeof(struct dirent64));
  std::mutex mutex_;
  std::atomic<bool> any_{false};
  std::map<DIR*, Listing> listings_;
};

int modeArgNeeded(int flags) {
  return (flags & O_CREAT) || (flags & O_TMPFILE) == O_TMPFILE;
}

}  // namespace
}  // namespace zerohop::camemu

using zerohop::camemu::cameraAt;
using zerohop::camemu::CameraRig;
using zerohop::camemu::DevListings;
using zerohop::camemu::EmulatedCamera;
using zerohop::camemu::FileTable;
using zerohop::camemu::next;
using zerohop::camemu::openDevice;
using zerohop::camemu::ueventCamera;

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
  if (auto* camera = cameraAt(path)) return openDevice(*camera, flags);
  if (auto* camera = ueventCamera(path)) return zerohop::camemu::openUevent(*camera);
  static auto fn = next<int (*)(const char*, int, ...)>("open");
  return fn(path, flags, mode);
}
ZH_EXPORT int open64(const char* path, int flags, ...) {
  ZH_OPEN_MODE(flags)
  if (auto* camera = cameraAt(path)) return openDevice(*camera, flags);
  if (auto* camera = ueventCamera(path)) return zerohop::camemu::openUevent(*camera);
  static auto fn = next<int (*)(const char*, int, ...)>("open64");
  return fn(path, flags, mode);
}
ZH_EXPORT int openat(int dirfd, const char* path, int flags, ...) {
  ZH_OPEN_MODE(flags)
  if (auto* camera = cameraAt(path)) return openDevice(*camera, flags);
  if (auto* camera = ueventCamera(path)) return zerohop::camemu::openUevent(*camera);
  static auto fn = next<int (*)(int, const char*, int, ...)>("openat");
  return fn(dirfd, path, flags, mode);
}
ZH_EXPORT int openat64(int dirfd, const char* path, int flags, ...) {
  ZH_OPEN_MODE(flags)
  if (auto* camera = cameraAt(path)) return openDevice(*camera, flags);
  if (auto* camera = ueventCamera(path)) return zerohop::camemu::openUevent(*camera);
  static auto fn = next<int (*)(int, const char*, int, ...)>("openat64");
  return fn(dirfd, path, flags, mode);
}
// _FORTIFY_SOURCE builds call these.
ZH_EXPORT int __open_2(const char* path, int flags) {
  if (auto* camera = cameraAt(path)) return openDevice(*camera, flags);
  if (auto* camera = ueventCamera(path)) return zerohop::camemu::openUevent(*camera);
  static auto fn = next<int (*)(const char*, int)>("__open_2");
  return fn(path, flags);
}
ZH_EXPORT int __open64_2(const char* path, int flags) {
  if (auto* camera = cameraAt(path)) return openDevice(*camera, flags);
  if (auto* camera = ueventCamera(path)) return zerohop::camemu::openUevent(*camera);
  static auto fn = next<int (*)(const char*, int)>("__open64_2");
  return fn(path, flags);
}
ZH_EXPORT int __openat_2(int dirfd, const char* path, int flags) {
  if (auto* camera = cameraAt(path)) return openDevice(*camera, flags);
  if (auto* camera = ueventCamera(path)) return zerohop::camemu::openUevent(*camera);
  static auto fn = next<int (*)(int, const char*, int)>("__openat_2");
  return fn(dirfd, path, flags);
}
ZH_EXPORT int __openat64_2(int dirfd, const char* path, int flags) {
  if (auto* camera = cameraAt(path)) return openDevice(*camera, flags);
  if (auto* camera = ueventCamera(path)) return zerohop::camemu::openUevent(*camera);
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
  if (auto* camera = cameraAt(path)) return zerohop::camemu::statDevice(*camera, st);
  static auto fn = next<int (*)(const char*, struct stat*)>("stat");
  return fn(path, st);
}
ZH_EXPORT int stat64(const char* path, struct stat64* st) {
  if (auto* camera = cameraAt(path))
    return zerohop::camemu::statDevice(*camera, reinterpret_cast<struct stat*>(st));
  static auto fn = next<int (*)(const char*, struct stat64*)>("stat64");
  return fn(path, st);
}
ZH_EXPORT int lstat(const char* path, struct stat* st) {
  if (auto* camera = cameraAt(path)) return zerohop::camemu::statDevice(*camera, st);
  static auto fn = next<int (*)(const char*, struct stat*)>("lstat");
  return fn(path, st);
}
ZH_EXPORT int lstat64(const char* path, struct stat64* st) {
  if (auto* camera = cameraAt(path))
    return zerohop::camemu::statDevice(*camera, reinterpret_cast<struct stat*>(st));
  static auto fn = next<int (*)(const char*, struct stat64*)>("lstat64");
  return fn(path, st);
}
ZH_EXPORT int fstat(int fd, struct stat* st) {
  if (auto file = FileTable::instance().find(fd)) {
    zerohop::camemu::fillStat(file->camera(), st);
    return 0;
  }
  static auto fn = next<int (*)(int, struct stat*)>("fstat");
  return fn(fd, st);
}
ZH_EXPORT int fstat64(int fd, struct stat64* st) {
  return fstat(fd, reinterpret_cast<struct stat*>(st));
}
ZH_EXPORT int fstatat(int dirfd, const char* path, struct stat* st, int flags) {
  if (auto* camera = cameraAt(path)) return zerohop::camemu::statDevice(*camera, st);
  if (path[0] == '\0' && (flags & AT_EMPTY_PATH)) {
    if (auto file = FileTable::instance().find(dirfd)) {
      zerohop::camemu::fillStat(file->camera(), st);
      return 0;
    }
  }
  static auto fn = next<int (*)(int, const char*, struct stat*, int)>("fstatat");
  return fn(dirfd, path, st, flags);
}
ZH_EXPORT int fstatat64(int dirfd, const char* path, struct stat64* st, int flags) {
  return fstatat(dirfd, path, reinterpret_cast<struct stat*>(st), flags);
}
// Binaries built against glibc < 2.33 call the versioned wrappers instead.
ZH_EXPORT int __xstat(int ver, const char* path, struct stat* st) {
  if (auto* camera = cameraAt(path)) return zerohop::camemu::statDevice(*camera, st);
  static auto fn = next<int (*)(int, const char*, struct stat*)>("__xstat");
  return fn(ver, path, st);
}
ZH_EXPORT int __xstat64(int ver, const char* path, struct stat64* st) {
  return __xstat(ver, path, reinterpret_cast<struct stat*>(st));
}
ZH_EXPORT int __lxstat(int ver, const char* path, struct stat* st) {
  if (auto* camera = cameraAt(path)) return zerohop::camemu::statDevice(*camera, st);
  static auto fn = next<int (*)(int, const char*, struct stat*)>("__lxstat");
  return fn(ver, path, st);
}
ZH_EXPORT int __lxstat64(int ver, const char* path, struct stat64* st) {
  return __lxstat(ver, path, reinterpret_cast<struct stat*>(st));
}
ZH_EXPORT int __fxstat(int ver, int fd, struct stat* st) {
  if (auto file = FileTable::instance().find(fd)) {
    zerohop::camemu::fillStat(file->camera(), st);
    return 0;
  }
  static auto fn = next<int (*)(int, int, struct stat*)>("__fxstat");
  return fn(ver, fd, st);
}
ZH_EXPORT int __fxstat64(int ver, int fd, struct stat64* st) {
  return __fxstat(ver, fd, reinterpret_cast<struct stat*>(st));
}
ZH_EXPORT int access(const char* path, int amode) {
  if (auto* camera = cameraAt(path)) return camera->present() ? 0 : (errno = ENOENT, -1);
  static auto fn = next<int (*)(const char*, int)>("access");
  return fn(path, amode);
}

// ---- stdio: std::ifstream and fopen() of the uevent file ------------------------------------------
ZH_EXPORT FILE* fopen(const char* path, const char* mode) {
  if (auto* camera = ueventCamera(path)) {
    const int fd = zerohop::camemu::openUevent(*camera);
    return fd < 0 ? nullptr : fdopen(fd, "r");
  }
  static auto fn = next<FILE* (*)(const char*, const char*)>("fopen");
  return fn(path, mode);
}
ZH_EXPORT FILE* fopen64(const char* path, const char* mode) {
  if (ueventCamera(path)) return fopen(path, mode);
  static auto fn = next<FILE* (*)(const char*, const char*)>("fopen64");
  return fn(path, mode);
}

// ---- directory listings: the cameras' nodes in /dev -----------------------------------------------
ZH_EXPORT DIR* opendir(const char* path) {
  static auto fn = next<DIR* (*)(const char*)>("opendir");
  DIR* dir = fn(path);
  if (dir && DevListings::isDev(path)) DevListings::instance().track(dir);
  return dir;
}
ZH_EXPORT struct dirent* readdir(DIR* dir) {
  static auto fn = next<struct dirent* (*)(DIR*)>("readdir");
  return DevListings::instance().next(dir, fn(dir));
}
ZH_EXPORT struct dirent64* readdir64(DIR* dir) {
  static auto fn = next<struct dirent64* (*)(DIR*)>("readdir64");
  return DevListings::instance().next(dir, fn(dir));
}
ZH_EXPORT int closedir(DIR* dir) {
  static auto fn = next<int (*)(DIR*)>("closedir");
  DevListings::instance().forget(dir);
  return fn(dir);
}
ZH_EXPORT void rewinddir(DIR* dir) {
  static auto fn = next<void (*)(DIR*)>("rewinddir");
  fn(dir);
  DevListings::instance().rewind(dir);
}
