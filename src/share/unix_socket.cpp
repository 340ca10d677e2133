#include "share/unix_socket.hpp"

#include <fcntl.h>
#include <poll.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>

#include "share/wire.hpp"
#include "zerohop/error.hpp"

#ifndef F_SEAL_FUTURE_WRITE
#define F_SEAL_FUTURE_WRITE 0x0010
#endif

namespace zerohop::share_detail {
namespace {

sockaddr_un addressFor(const std::string& path) {
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  if (path.size() >= sizeof(addr.sun_path)) {
    throw Error(Errc::kInvalidArgument, "share socket path '" + path + "' is longer than " +
                                            std::to_string(sizeof(addr.sun_path) - 1) + " bytes");
  }
  std::memcpy(addr.sun_path, path.c_str(), path.size() + 1);
  return addr;
}

constexpr std::size_t kMaxFds = 8;

constexpr int kRetriedAfterReset = 1 << 30;  // internal flag bit, stripped before recvmsg

std::optional<ReceivedMessage> receiveWithFlags(int fd, int flags) {
  ReceivedMessage msg;
  msg.bytes.resize(kMaxMessageBytes + 1);
  iovec iov{msg.bytes.data(), msg.bytes.size()};
  alignas(cmsghdr) char control[CMSG_SPACE(sizeof(int) * kMaxFds)];
  msghdr mh{};
  mh.msg_iov = &iov;
  mh.msg_iovlen = 1;
  mh.msg_control = control;
  mh.msg_controllen = sizeof(control);
  ssize_t n;
  do {
    n = ::recvmsg(fd, &mh, (flags & ~kRetriedAfterReset) | MSG_CMSG_CLOEXEC);
  } while (n < 0 && errno == EINTR);
  if (n < 0) {
    if (errno == EAGAIN || errno == EWOULDBLOCK) {
      msg.bytes.clear();
      return msg;
    }
    if (errno == ECONNRESET) {
      // A peer that closed with our message unread resets the connection, and Linux reports that
      // before the messages it sent us (a Reject, typically). The error is consumed now: read again.
      if (!(flags & MSG_PEEK) && !(flags & kRetriedAfterReset))
        return receiveWithFlags(fd, flags | kRetriedAfterReset);
      return std::nullopt;
    }
    throwErrno("recvmsg", errno, "share socket");
  }
  // Take ownership of every descriptor first, so a malformed message leaks none.
  for (cmsghdr* c = CMSG_FIRSTHDR(&mh); c; c = CMSG_NXTHDR(&mh, c)) {
    if (c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_RIGHTS) {
      const std::size_t count = (c->cmsg_len - CMSG_LEN(0)) / sizeof(int);
      for (std::size_t i = 0; i < count; ++i) {
        int received;
        std::memcpy(&received, CMSG_DATA(c) + i * sizeof(int), sizeof(int));
        msg.fds.emplace_back(received);
      }
    }
  }
  if (n == 0 && msg.fds.empty()) return std::nullopt;  // orderly shutdown
  if (mh.msg_flags & MSG_TRUNC) {
    throw Error(Errc::kProtocol, "share message larger than " + std::to_string(kMaxMessageBytes) + " bytes");
  }
  if (mh.msg_flags & MSG_CTRUNC) throw Error(Errc::kProtocol, "share message carried too many descriptors");
  msg.bytes.resize(static_cast<std::size_t>(n));
  return msg;
}

}  // namespace

std::string defaultShareDirectory() {
  if (const char* xdg = std::getenv("XDG_RUNTIME_DIR"); xdg && *xdg) return std::string(xdg) + "/zerohop";
  return "/tmp/zerohop-" + std::to_string(::getuid());
}

void validateShareName(std::string_view name) {
  bool ok = !name.empty() && name.size() <= 64 && name.front() != '.';
  for (char c : name) {
    ok = ok && ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.' ||
                c == '_' || c == '-');
  }
  if (!ok) {
    throw Error(Errc::kInvalidArgument, "share name '" + std::string(name) +
                                            "' must be 1-64 characters of A-Z a-z 0-9 . _ - and not start "
                                            "with '.' (example: cam0)");
  }
}

std::string socketPathFor(const std::string& directory, std::string_view name) {
  validateShareName(name);
  return directory + "/" + std::string(name) + ".sock";
}

void prepareShareDirectory(const std::string& directory, std::optional<gid_t> group) {
  const mode_t mode = group ? 0710 : 0700;
  if (::mkdir(directory.c_str(), mode) == 0) {
    // mkdir applies the umask; set the exact mode (and group) explicitly.
    if (group && ::chown(directory.c_str(), static_cast<uid_t>(-1), *group) != 0) {
      throwErrno("chown", errno, directory);
    }
    if (::chmod(directory.c_str(), mode) != 0) throwErrno("chmod", errno, directory);
  } else if (errno != EEXIST) {
    throwErrno("mkdir", errno, directory);
  }
  struct stat st {};
  if (::lstat(directory.c_str(), &st) != 0) throwErrno("lstat", errno, directory);
  if (!S_ISDIR(st.st_mode))
    throw Error(Errc::kUnavailable, "share directory '" + directory + "' is not a directory");
  if (st.st_uid != ::geteuid()) {
    throw Error(Errc::kUnavailable, "share directory '" + directory + "' belongs to uid " +
                                        std::to_string(st.st_uid) + ", not to us (uid " +
                                        std::to_string(::geteuid()) + "): refusing to publish there");
  }
  if (st.st_mode & (S_IWGRP | S_IWOTH)) {
    throw Error(Errc::kUnavailable,
                "share directory '" + directory +
                    "' is writable by group or others: refusing to publish there (chmod 700 it)");
  }
}

UniqueFd listenSeqpacket(const std::string& path, std::optional<gid_t> group) {
  const sockaddr_un addr = addressFor(path);
  UniqueFd fd(::socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC | SOCK_NONBLOCK, 0));
  if (!fd) throwErrno("socket", errno, "AF_UNIX SOCK_SEQPACKET");
  // umask 0177 while binding: the socket file never exists with wider permissions, not even briefly.
  auto tryBind = [&] {
    const mode_t old = ::umask(0177);
    const int rc = ::bind(fd.get(), reinterpret_cast<const sockaddr*>(&addr), sizeof(addr));
    const int err = errno;
    ::umask(old);
    errno = err;
    return rc;
  };
  if (tryBind() != 0) {
    if (errno != EADDRINUSE) throwErrno("bind", errno, path);
    // Someone's socket file is there: live publisher or stale leftover of a killed one?
    UniqueFd probe(::socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0));
    if (probe && ::connect(probe.get(), reinterpret_cast<const sockaddr*>(&addr), sizeof(addr)) == 0) {
      throw Error(Errc::kUnavailable,
                  "share socket '" + path + "' is already published by a running publisher");
    }
    if (::unlink(path.c_str()) != 0 && errno != ENOENT) throwErrno("unlink", errno, path);
    if (tryBind() != 0) throwErrno("bind", errno, path);
  }
  if (group) {
    if (::chown(path.c_str(), static_cast<uid_t>(-1), *group) != 0) throwErrno("chown", errno, path);
    if (::chmod(path.c_str(), 0660) != 0) throwErrno("chmod", errno, path);
  }
  if (::listen(fd.get(), 16) != 0) throwErrno("listen", errno, path);
  return fd;
}

UniqueFd tryConnectSeqpacket(const std::string& path, int& err) {
  const sockaddr_un addr = addressFor(path);
  UniqueFd fd(::socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0));
  if (!fd) throwErrno("socket", errno, "AF_UNIX SOCK_SEQPACKET");
  if (::connect(fd.get(), reinterpret_cast<const sockaddr*>(&addr), sizeof(addr)) != 0) {
    err = errno;
    return UniqueFd();
  }
  err = 0;
  return fd;
}

UniqueFd connectSeqpacket(const std::string& path) {
  int err = 0;
  UniqueFd fd = tryConnectSeqpacket(path, err);
  if (!fd) throwErrno("connect", err, path);
  return fd;
}

PeerCredentials peerCredentials(int socketFd) {
  ucred cred{};
  socklen_t len = sizeof(cred);
  if (::getsockopt(socketFd, SOL_SOCKET, SO_PEERCRED, &cred, &len) != 0)
    throwErrno("getsockopt", errno, "SO_PEERCRED");
  return PeerCredentials{cred.pid, cred.uid, cred.gid};
}

void sendMessage(int socketFd, std::span<const std::uint8_t> bytes, std::span<const int> fds) {
  iovec iov{const_cast<std::uint8_t*>(bytes.data()), bytes.size()};
  msghdr mh{};
  mh.msg_iov = &iov;
  mh.msg_iovlen = 1;
  alignas(cmsghdr) char control[CMSG_SPACE(sizeof(int) * kMaxFds)];
  if (!fds.empty()) {
    if (fds.size() > kMaxFds) throw Error(Errc::kInternal, "sendMessage: too many descriptors");
    mh.msg_control = control;
    mh.msg_controllen = CMSG_SPACE(sizeof(int) * fds.size());
    cmsghdr* c = CMSG_FIRSTHDR(&mh);
    c->cmsg_level = SOL_SOCKET;
    c->cmsg_type = SCM_RIGHTS;
    c->cmsg_len = CMSG_LEN(sizeof(int) * fds.size());
    std::memcpy(CMSG_DATA(c), fds.data(), sizeof(int) * fds.size());
  }
  ssize_t n;
  do {
    n = ::sendmsg(socketFd, &mh, MSG_NOSIGNAL);
  } while (n < 0 && errno == EINTR);
  if (n < 0) throwErrno("sendmsg", errno, "share socket");
  if (static_cast<std::size_t>(n) != bytes.size())
    throw Error(Errc::kIo, "sendmsg: short write on a share socket");
}

std::optional<ReceivedMessage> receiveMessage(int socketFd, std::chrono::milliseconds timeout) {
  pollfd p{socketFd, POLLIN, 0};
  int rc;
  do {
    rc = ::poll(&p, 1, static_cast<int>(timeout.count()));
  } while (rc < 0 && errno == EINTR);
  if (rc < 0) throwErrno("poll", errno, "share socket");
  if (rc == 0)
    throw Error(Errc::kTimeout,
                "no answer on the share socket within " + std::to_string(timeout.count()) + " ms");
  return receiveWithFlags(socketFd, MSG_DONTWAIT);
}

std::optional<ReceivedMessage> receiveMessageNow(int socketFd) {
  return receiveWithFlags(socketFd, MSG_DONTWAIT);
}

bool peerHungUp(int socketFd) {
  pollfd p{socketFd, POLLIN | POLLRDHUP, 0};
  const int rc = ::poll(&p, 1, 0);
  if (rc <= 0) return false;
  if (p.revents & (POLLHUP | POLLRDHUP | POLLERR | POLLNVAL)) return true;
  if (p.revents & POLLIN) {
    char b;
    const ssize_t n = ::recv(socketFd, &b, 1, MSG_PEEK | MSG_DONTWAIT);
    return n == 0;
  }
  return false;
}

UniqueFd createSealedMemfd(const char* name, std::size_t bytes) {
  UniqueFd fd(::memfd_create(name, MFD_CLOEXEC | MFD_ALLOW_SEALING));
  if (!fd) throwErrno("memfd_create", errno, name);
  if (::ftruncate(fd.get(), static_cast<off_t>(bytes)) != 0) throwErrno("ftruncate", errno, name);
  if (::fcntl(fd.get(), F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW) != 0)
    throwErrno("fcntl(F_ADD_SEALS)", errno, name);
  return fd;
}

bool sealFutureWrites(int memfd) {
  return ::fcntl(memfd, F_ADD_SEALS, F_SEAL_FUTURE_WRITE | F_SEAL_SEAL) == 0;
}

std::size_t fileSize(int fd) {
  struct stat st {};
  if (::fstat(fd, &st) != 0) throwErrno("fstat", errno, "share memory");
  return static_cast<std::size_t>(st.st_size);
}

}  // namespace zerohop::share_detail
