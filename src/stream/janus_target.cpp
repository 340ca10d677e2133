#include "stream/janus_target.hpp"

#include <algorithm>
#include <optional>

#include "zerohop/error.hpp"
#include "zerohop/setting_error.hpp"

namespace zerohop::stream {
namespace {

// The spec as quoted in a message: a mountpoint's secret= value is not.
std::string quotable(std::string_view spec) {
  std::string out(spec);
  for (std::size_t at = out.find("secret="); at != std::string::npos; at = out.find("secret=", at + 1)) {
    const std::size_t from = at + 7, to = std::min(out.find('&', from), out.size());
    out.replace(from, to - from, "...");
  }
  return out;
}

[[noreturn]] void bad(std::string_view spec, const std::string& why) {
  throw SettingError(
      Errc::kInvalidArgument, setting::kJanus,
      "Janus / RTP target \"" + quotable(spec) + "\": " + why +
          " (want HOST:PORT?mountpoint=ID[&secret=S] or HOST:PORT[?rtcp=PORT&pt=N&audio=PORT])");
}

unsigned long number(std::string_view spec, std::string_view text, unsigned long lo, unsigned long hi,
                     const char* what) {
  unsigned long v = 0;
  if (text.empty()) bad(spec, std::string(what) + " is empty");
  for (char c : text) {
    if (c < '0' || c > '9' || v > hi)
      bad(spec,
          std::string(what) + " is not a number from " + std::to_string(lo) + " to " + std::to_string(hi));
    v = v * 10 + static_cast<unsigned long>(c - '0');
  }
  if (v < lo || v > hi) {
    bad(spec,
        std::string(what) + " is not a number from " + std::to_string(lo) + " to " + std::to_string(hi));
  }
  return v;
}

}  // namespace

JanusTarget parseJanusTarget(std::string_view spec) {
  JanusTarget j;
  RtpTarget& t = j.rtp;
  const std::size_t q = spec.find('?');
  const std::string_view hostPort = spec.substr(0, q);
  std::string_view portText;
  if (!hostPort.empty() && hostPort[0] == '[') {
    const std::size_t close = hostPort.find(']');
    if (close == std::string_view::npos || close + 1 >= hostPort.size() || hostPort[close + 1] != ':')
      bad(spec, "an IPv6 host needs the form [ADDR]:PORT");
    t.host = std::string(hostPort.substr(1, close - 1));
    portText = hostPort.substr(close + 2);
  } else {
    const std::size_t colon = hostPort.rfind(':');
    if (colon == std::string_view::npos) bad(spec, "no :PORT");
    t.host = std::string(hostPort.substr(0, colon));
    if (t.host.find(':') != std::string::npos) bad(spec, "an IPv6 host needs brackets, [ADDR]:PORT");
    portText = hostPort.substr(colon + 1);
  }
  if (t.host.empty()) bad(spec, "no host");
  const auto port = static_cast<std::uint16_t>(number(spec, portText, 1, 65535, "the port"));
  bool rtpOptions = false;
  std::string_view query = q == std::string_view::npos ? std::string_view{} : spec.substr(q + 1);
  std::optional<std::uint16_t> rtcp;
  while (!query.empty()) {
    const std::size_t amp = query.find('&');
    const std::string_view item = query.substr(0, amp);
    const std::size_t eq = item.find('=');
    const std::string_view key = item.substr(0, eq);
    const std::string_view value = eq == std::string_view::npos ? std::string_view{} : item.substr(eq + 1);
    if (key == "rtcp") {
      rtcp = static_cast<std::uint16_t>(number(spec, value, 1, 65535, "rtcp"));
      rtpOptions = true;
    } else if (key == "pt") {
      t.payloadType = static_cast<int>(number(spec, value, 96, 127, "pt"));
      rtpOptions = true;
    } else if (key == "audio") {
      t.audioPort = static_cast<std::uint16_t>(number(spec, value, 1, 65534, "audio"));
      t.audioRtcpPort = static_cast<std::uint16_t>(t.audioPort + 1);
      rtpOptions = true;
    } else if (key == "mountpoint") {
      j.mountpoint = number(spec, value, 1, 0xFFFFFFFFFFFFull, "mountpoint");
    } else if (key == "secret") {
      if (value.empty()) bad(spec, "secret is empty");
      j.secret = std::string(value);
    } else {
      bad(spec, "unknown option \"" + std::string(key) + "\"");
    }
    query = amp == std::string_view::npos ? std::string_view{} : query.substr(amp + 1);
  }
  if (j.mountpoint != 0) {
    if (rtpOptions) bad(spec, "rtcp=, pt= and audio= come from Janus when mountpoint= is given");
    j.apiPort = port;
    return j;
  }
  if (!j.secret.empty()) bad(spec, "secret= goes with mountpoint=");
  if (port == 65535 && !rtcp) bad(spec, "the port is not a number from 1 to 65534 (RTCP goes to PORT+1)");
  t.rtpPort = port;
  t.rtcpPort = rtcp ? *rtcp : static_cast<std::uint16_t>(port + 1);
  if (t.rtcpPort == t.rtpPort) bad(spec, "rtcp is the RTP port itself");
  if (t.audioPort != 0 && (t.audioPort == t.rtpPort || t.audioPort == t.rtcpPort || t.audioRtcpPort == t.rtpPort))
    bad(spec, "audio and its RTCP (audio+1) must be other ports than the video's");
  return j;
}

}  // namespace zerohop::stream
