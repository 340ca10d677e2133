#include "rtsp/rtsp_url.hpp"

#include <algorithm>
#include <charconv>
#include <utility>

#include "zerohop/error.hpp"
#include "zerohop/setting_error.hpp"

namespace zerohop::rtsp {
namespace {

constexpr std::string_view kScheme = "rtsp://";
constexpr const char* kExample =
    "; e.g. rtsp://192.168.1.20:554/stream1, "
    "rtsp://admin:secret@cam.local/cam/realmonitor?channel=1&subtype=0, "
    "rtsp://cam.local/stream1?protocols=udp&latency=100";

[[noreturn]] void bad(const std::string& what) {
  throw SettingError(Errc::kInvalidArgument, setting::kSource, "bad source spec: " + what + kExample);
}

int hexDigit(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

std::string percentDecode(std::string_view s, const char* what) {
  std::string out;
  out.reserve(s.size());
  for (std::size_t i = 0; i < s.size(); ++i) {
    if (s[i] != '%') {
      out += s[i];
      continue;
    }
    const int hi = i + 2 < s.size() ? hexDigit(s[i + 1]) : -1;
    const int lo = i + 2 < s.size() ? hexDigit(s[i + 2]) : -1;
    if (hi < 0 || lo < 0)
      bad(std::string("the ") + what + " in the URL has a '%' not followed by two hex digits");
    out += static_cast<char>(hi * 16 + lo);
    i += 2;
  }
  return out;
}

std::uint32_t parseNumber(std::string_view s, std::uint32_t max, const std::string& what) {
  std::uint32_t v = 0;
  auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (s.empty() || ec != std::errc() || p != s.data() + s.size() || v > max)
    bad(what + " '" + std::string(s) + "' is not a number in 0.." + std::to_string(max));
  return v;
}

std::string checkedProtocols(std::string_view value) {
  if (value.empty()) bad("protocols needs a value: tcp, udp, udp-mcast or several joined with '+'");
  std::string_view rest = value;
  while (!rest.empty()) {
    const auto plus = rest.find('+');
    const std::string_view one = rest.substr(0, plus);
    if (one != "tcp" && one != "udp" && one != "udp-mcast")
      bad("unknown RTSP protocol '" + std::string(one) +
          "' (tcp, udp, udp-mcast; several joined with '+', e.g. udp+tcp)");
    rest = plus == std::string_view::npos ? std::string_view{} : rest.substr(plus + 1);
  }
  return std::string(value);
}

}  // namespace

std::string RtspUrl::location() const {
  return std::string(kScheme) + host + (port == 554 ? "" : ":" + std::to_string(port)) + path;
}

std::string RtspUrl::masked() const {
  std::string out = std::string(kScheme) + (user.empty() && password.empty() ? "" : "***@") + host +
                    (port == 554 ? "" : ":" + std::to_string(port)) + path;
  char sep = path.find('?') == std::string::npos ? '?' : '&';
  if (protocols != RtspUrl{}.protocols)
    out += std::exchange(sep, '&') + std::string("protocols=") + protocols;
  if (latencyMs != RtspUrl{}.latencyMs)
    out += std::exchange(sep, '&') + std::string("latency=") + std::to_string(latencyMs);
  if (format != PixelFormat::kH264) out += std::exchange(sep, '&') + std::string("format=") + std::string(formatName(format));
  return out;
}

RtspUrl parseRtspUrl(std::string_view text) {
  if (text.substr(0, kScheme.size()) != kScheme) bad("an RTSP camera's address starts with rtsp://");
  std::string_view rest = text.substr(kScheme.size());
  RtspUrl url;
  // authority: up to the first '/' or '?' (a password holding either must be percent-encoded)
  const auto end = rest.find_first_of("/?");
  std::string_view authority = rest.substr(0, end);
  std::string_view tail = end == std::string_view::npos ? std::string_view{} : rest.substr(end);
  if (const auto at = authority.rfind('@'); at != std::string_view::npos) {
    const std::string_view userinfo = authority.substr(0, at);
    authority = authority.substr(at + 1);
    const auto colon = userinfo.find(':');
    url.user = percentDecode(userinfo.substr(0, colon), "user");
    if (colon != std::string_view::npos) url.password = percentDecode(userinfo.substr(colon + 1), "password");
    if (url.user.empty()) bad("the URL has credentials ('@') but no user name before them");
  }
  std::string_view host = authority;
  if (!host.empty() && host.front() == '[') {  // IPv6 literal
    const auto close = host.find(']');
    if (close == std::string_view::npos)
      bad("an IPv6 host must be written in brackets, e.g. rtsp://[fe80::1]:554/stream");
    url.host = std::string(host.substr(0, close + 1));
    host = host.substr(close + 1);
    if (!host.empty() && host.front() != ':') bad("unexpected text after the IPv6 host's ']'");
    if (!host.empty()) url.port = static_cast<std::uint16_t>(parseNumber(host.substr(1), 65535, "port"));
  } else {
    const auto colon = host.rfind(':');
    url.host = std::string(host.substr(0, colon));
    if (colon != std::string_view::npos)
      url.port = static_cast<std::uint16_t>(parseNumber(host.substr(colon + 1), 65535, "port"));
  }
  if (url.host.empty()) bad("the URL has no host");
  if (url.port == 0) bad("port 0 is not a camera's port");
  // path and query: zerohop's keys are taken out, the camera's stay in its URL in their order
  const auto q = tail.find('?');
  url.path = std::string(tail.substr(0, q));
  if (url.path.empty()) url.path = "/";
  std::string cameraQuery;
  std::string_view query = q == std::string_view::npos ? std::string_view{} : tail.substr(q + 1);
  while (!query.empty()) {
    const auto amp = query.find('&');
    const std::string_view kv = query.substr(0, amp);
    query = amp == std::string_view::npos ? std::string_view{} : query.substr(amp + 1);
    const auto eq = kv.find('=');
    const std::string_view key = kv.substr(0, eq);
    const std::string_view value = eq == std::string_view::npos ? std::string_view{} : kv.substr(eq + 1);
    if (key == "protocols") {
      url.protocols = checkedProtocols(value);
    } else if (key == "latency") {
      url.latencyMs = parseNumber(value, 10000, "latency (ms)");
    } else if (key == "format") {
      if (value == "i420") {
        url.format = PixelFormat::kI420;
      } else if (value == "nv12") {
        url.format = PixelFormat::kNV12;
      } else if (value != "h264") {
        throw Error(Errc::kUnsupported,
                    "an RTSP camera's format is h264 (its H.264 passed through to viewers undecoded, the "
                    "default), i420 (decoded on the CPU, for shared frames and VP8 viewers, and encoded "
                    "again for H.264 viewers) or nv12 (decoded into GPU memory by NVDEC, for the same), not " +
                        std::string(value));
      }
    } else if (key == "size" || key == "fps") {
      throw Error(Errc::kUnsupported,
                  "an RTSP camera's " + std::string(key) +
                      " is the camera's own (set it in the camera's settings): zerohop does not scale or "
                      "resample it; leave " +
                      std::string(key) + " out");
    } else if (!kv.empty()) {
      cameraQuery += (cameraQuery.empty() ? "" : "&") + std::string(kv);
    }
  }
  if (!cameraQuery.empty()) url.path += "?" + cameraQuery;
  return url;
}

std::string maskCredentials(std::string_view text) {
  std::string out;
  std::size_t from = 0;
  for (;;) {
    const auto start = text.find(kScheme, from);
    if (start == std::string_view::npos) break;
    const std::size_t authority = start + kScheme.size();
    const auto end = std::min(text.find_first_of("/? \t\n\"'", authority), text.size());
    const auto at = text.substr(authority, end - authority).rfind('@');
    out += text.substr(from, authority - from);
    if (at != std::string_view::npos) {
      out += "***";
      from = authority + at;  // from the '@'
    } else {
      from = authority;
    }
  }
  out += text.substr(from);
  return out;
}

}  // namespace zerohop::rtsp
