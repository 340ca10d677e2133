#include "stream/whip_url.hpp"

#include <algorithm>
#include <cctype>

#include "zerohop/error.hpp"
#include "zerohop/setting_error.hpp"

namespace zerohop::stream {
namespace {

/// `url` as a message may quote it: user info (a password, often) in its authority masked as "***@".
std::string quotable(std::string_view url) {
  const std::size_t scheme = url.find("://");
  const std::size_t start = scheme == std::string_view::npos ? 0 : scheme + 3;
  const std::size_t end = std::min(url.find_first_of("/?#", start), url.size());
  const std::size_t at = url.substr(0, end).rfind('@');
  if (at == std::string_view::npos || at < start) return std::string(url);
  return std::string(url.substr(0, start)) + "***" + std::string(url.substr(at));
}

[[noreturn]] void bad(std::string_view url, const std::string& why) {
  throw SettingError(Errc::kInvalidArgument, setting::kWhipUrl,
                     "WHIP URL \"" + quotable(url) + "\": " + why + " (want http[s]://HOST[:PORT]/PATH)");
}

bool startsWithNoCase(std::string_view s, std::string_view prefix) {
  if (s.size() < prefix.size()) return false;
  for (std::size_t i = 0; i < prefix.size(); ++i) {
    if (std::tolower(static_cast<unsigned char>(s[i])) != prefix[i]) return false;
  }
  return true;
}

// RFC 3986: scheme = ALPHA *( ALPHA / DIGIT / "+" / "-" / "." ) ":"
bool hasScheme(std::string_view s) {
  const std::size_t colon = s.find(':');
  if (colon == std::string_view::npos || colon == 0 || !std::isalpha(static_cast<unsigned char>(s[0])))
    return false;
  for (std::size_t i = 1; i < colon; ++i) {
    const char c = s[i];
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '+' && c != '-' && c != '.') return false;
  }
  return true;
}

}  // namespace

std::string HttpUrl::origin() const {
  const std::string h = host.find(':') != std::string::npos ? "[" + host + "]" : host;
  return scheme + "://" + h + ":" + std::to_string(port);
}

HttpUrl parseHttpUrl(std::string_view url) {
  HttpUrl out;
  std::string_view rest;
  if (startsWithNoCase(url, "http://")) {
    out.scheme = "http";
    out.port = 80;
    rest = url.substr(7);
  } else if (startsWithNoCase(url, "https://")) {
    out.scheme = "https";
    out.port = 443;
    rest = url.substr(8);
  } else {
    bad(url, "not an http:// or https:// URL");
  }
  for (char c : url) {
    if (static_cast<unsigned char>(c) <= 0x20 || c == 0x7f) bad(url, "spaces or control characters");
  }
  if (url.find('#') != std::string_view::npos) bad(url, "a fragment (#...) has no meaning here");
  const std::size_t slash = rest.find_first_of("/?");
  std::string_view authority = rest.substr(0, slash);
  out.target = slash == std::string_view::npos ? "/" : std::string(rest.substr(slash));
  if (out.target[0] == '?') out.target.insert(out.target.begin(), '/');
  if (authority.find('@') != std::string_view::npos)
    bad(url, "user info (user@) is not supported; give the endpoint's bearer token as the WHIP token instead");
  std::string_view portText;
  if (!authority.empty() && authority[0] == '[') {
    const std::size_t close = authority.find(']');
    if (close == std::string_view::npos) bad(url, "an IPv6 address without its closing ']'");
    out.host = std::string(authority.substr(1, close - 1));
    const std::string_view after = authority.substr(close + 1);
    if (!after.empty()) {
      if (after[0] != ':') bad(url, "garbage after the IPv6 address");
      portText = after.substr(1);
      if (portText.empty()) bad(url, "an empty port");
    }
  } else {
    const std::size_t colon = authority.rfind(':');
    out.host = std::string(authority.substr(0, colon));
    if (colon != std::string_view::npos) {
      portText = authority.substr(colon + 1);
      if (portText.empty()) bad(url, "an empty port");
    }
  }
  if (out.host.empty()) bad(url, "no host");
  if (!portText.empty()) {
    unsigned long port = 0;
    for (char c : portText) {
      if (c < '0' || c > '9' || port > 65535) bad(url, "the port is not a number from 1 to 65535");
      port = port * 10 + static_cast<unsigned long>(c - '0');
    }
    if (port == 0 || port > 65535) bad(url, "the port is not a number from 1 to 65535");
    out.port = static_cast<std::uint16_t>(port);
  }
  return out;
}

HttpUrl resolveLocation(const HttpUrl& endpoint, std::string_view location) {
  if (location.empty()) throw Error(Errc::kProtocol, "the WHIP endpoint answered 201 without a Location");
  if (hasScheme(location)) return parseHttpUrl(location);  // absolute; refused unless http(s)
  if (location.substr(0, 2) == "//") return parseHttpUrl(endpoint.scheme + ":" + std::string(location));
  HttpUrl out = endpoint;
  if (location[0] == '/') {
    out.target = std::string(location);
  } else {
    std::string dir = endpoint.target.substr(0, endpoint.target.find('?'));
    dir = dir.substr(0, dir.rfind('/') + 1);
    out.target = dir + std::string(location);
  }
  return parseHttpUrl(out.origin() + out.target);  // the same checks on what the server sent
}

}  // namespace zerohop::stream
