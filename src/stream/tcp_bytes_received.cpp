#include "stream/tcp_bytes_received.hpp"

#include <linux/tcp.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include <cstddef>

namespace zerohop::stream {

std::optional<std::uint64_t> tcpBytesReceived(int fd) noexcept {
  tcp_info info{};
  socklen_t size = sizeof info;
  if (fd < 0 || ::getsockopt(fd, IPPROTO_TCP, TCP_INFO, &info, &size) != 0) return std::nullopt;
  if (size < offsetof(tcp_info, tcpi_bytes_received) + sizeof info.tcpi_bytes_received) return std::nullopt;
  return info.tcpi_bytes_received;
}

}  // namespace zerohop::stream
