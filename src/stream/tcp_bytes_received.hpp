#pragma once
// How many bytes a TCP socket has received so far (the kernel's count, TCP_INFO's tcpi_bytes_received:
// what the peer sent, read by us or still queued), for bounding what a peer may make us read whatever
// layer reads it (the WHIP client: cpp-httplib reads any number of header lines).
// Its own file: <linux/tcp.h>, which has the field, conflicts with <netinet/tcp.h>, which httplib includes.
// Thread-safety: reentrant.

#include <cstdint>
#include <optional>

namespace zerohop::stream {

/// nullopt when `fd` is not a TCP socket or the kernel does not say (Linux < 4.1).
std::optional<std::uint64_t> tcpBytesReceived(int fd) noexcept;

}  // namespace zerohop::stream
