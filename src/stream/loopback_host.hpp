#pragma once
// Whether a host name or address is this machine's loopback: "localhost", an IPv4 address in
// 127.0.0.0/8 or the IPv6 ::1. The stream server uses it to keep ICE on 127.0.0.1 and to warn about
// a public listener without a token; the WHIP publisher, to keep ICE local for a loopback endpoint.
// Thread-safety: reentrant.

#include <arpa/inet.h>
#include <netinet/in.h>

#include <string>

namespace zerohop::stream {

inline bool isLoopbackHost(const std::string& host) noexcept {
  if (host == "localhost") return true;
  in_addr v4{};
  if (::inet_pton(AF_INET, host.c_str(), &v4) == 1) return (ntohl(v4.s_addr) >> 24) == 127;
  in6_addr v6{};
  return ::inet_pton(AF_INET6, host.c_str(), &v6) == 1 && IN6_IS_ADDR_LOOPBACK(&v6);
}

}  // namespace zerohop::stream
