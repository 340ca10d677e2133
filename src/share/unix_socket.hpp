#pragma once
// The OS plumbing of a share: where its socket lives, SOCK_SEQPACKET listen/connect, messages with
// SCM_RIGHTS file descriptors, SO_PEERCRED, and sealed memfds. Every failure is a zerohop::Error
// naming the call and errno text.
// Thread-safety: reentrant free functions.

#include <sys/types.h>

#include <chrono>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "core/unique_fd.hpp"

namespace zerohop::share_detail {

/// $XDG_RUNTIME_DIR/zerohop when XDG_RUNTIME_DIR is set, else /tmp/zerohop-<uid>.
std::string defaultShareDirectory();
/// Throws kInvalidArgument unless `name` is 1..64 of [A-Za-z0-9._-] and does not start with '.'.
void validateShareName(std::string_view name);
std::string socketPathFor(const std::string& directory, std::string_view name);

/// Creates `directory` (0700, or 0710 with `group` as its group) if missing; refuses (kUnavailable)
/// a directory another user owns or that group/others can write, so nobody can plant a socket.
void prepareShareDirectory(const std::string& directory, std::optional<gid_t> group);

/// Binds and listens on `path` (0600, or 0660 with `group`). A stale socket left by a dead publisher
/// is replaced; a live one is kUnavailable ("already published").
UniqueFd listenSeqpacket(const std::string& path, std::optional<gid_t> group);
/// Connects to `path`; kNotFound when nobody publishes there, kUnavailable when refused.
UniqueFd connectSeqpacket(const std::string& path);
/// Connects to `path`; on failure returns an empty fd and connect()'s errno in `err` (ENOENT: no
/// socket there, ECONNREFUSED: a socket nobody listens on). Throws only when no socket can be made.
UniqueFd tryConnectSeqpacket(const std::string& path, int& err);

struct PeerCredentials {
  pid_t pid = 0;
  uid_t uid = 0;
  gid_t gid = 0;
};
PeerCredentials peerCredentials(int socketFd);

/// Sends one message with optional descriptors (MSG_NOSIGNAL: a dead peer is an Error, not SIGPIPE).
void sendMessage(int socketFd, std::span<const std::uint8_t> bytes, std::span<const int> fds = {});

struct ReceivedMessage {
  std::vector<std::uint8_t> bytes;
  std::vector<UniqueFd> fds;  ///< always owned, so unexpected descriptors are closed
};
/// Receives one message. nullopt when the peer closed; kTimeout after `timeout`; kProtocol when the
/// message or its descriptors were truncated (the payload bound is kMaxMessageBytes).
std::optional<ReceivedMessage> receiveMessage(int socketFd, std::chrono::milliseconds timeout);
/// Non-blocking receive for a poll loop: nullopt when the peer closed; empty bytes when nothing waits.
std::optional<ReceivedMessage> receiveMessageNow(int socketFd);

/// True when the peer has hung up (poll POLLHUP/POLLRDHUP, or EOF pending). Never blocks.
bool peerHungUp(int socketFd);

/// A memfd of `bytes`, zero-filled, sealed against shrinking and growing (no SIGBUS for mappers).
UniqueFd createSealedMemfd(const char* name, std::size_t bytes);
/// Forbids new writable mappings (F_SEAL_FUTURE_WRITE) after the creator mapped it writable, so
/// readers can only map it read-only. Returns false where the kernel lacks the seal (< 5.1).
bool sealFutureWrites(int memfd);
/// Size of the file behind `fd` (fstat).
std::size_t fileSize(int fd);

}  // namespace zerohop::share_detail
