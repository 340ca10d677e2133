#pragma once
// The URLs of WHIP publishing: the endpoint given to `serve --whip` and the resource the endpoint
// names in its Location header (absolute, or relative to the endpoint as RFC 3986 resolves it).
// Pure logic on strings, no sockets, so it runs anywhere.
// Thread-safety: reentrant.

#include <cstdint>
#include <string>
#include <string_view>

namespace zerohop::stream {

struct HttpUrl {
  std::string scheme;  ///< "http" or "https"
  std::string host;    ///< name or address; an IPv6 literal without its brackets
  std::uint16_t port = 0;
  std::string target;  ///< path and query, always starting with '/'

  /// "http://host:port", as cpp-httplib's Client takes it.
  std::string origin() const;
  std::string str() const { return origin() + target; }
};

/// Parses "http[s]://host[:port][/path][?query]". Throws Error(kInvalidArgument) naming what is wrong
/// (another scheme, user info, an empty host, a bad port, a fragment).
HttpUrl parseHttpUrl(std::string_view url);

/// The resource URL a WHIP endpoint's `Location` names: an absolute http(s) URL as is, "/path" on the
/// endpoint's origin, anything else relative to the endpoint's directory. Throws like parseHttpUrl.
HttpUrl resolveLocation(const HttpUrl& endpoint, std::string_view location);

}  // namespace zerohop::stream
