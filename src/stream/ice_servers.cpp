#include "stream/ice_servers.hpp"

#include <arpa/inet.h>
#include <glib.h>

#include <algorithm>
#include <cctype>
#include <sstream>

#include "zerohop/error.hpp"
#include "zerohop/setting_error.hpp"

namespace zerohop::stream {
namespace {

constexpr const char* kForms =
    "use stun://HOST[:PORT], turn://USER:PASS@HOST[:PORT][?transport=tcp] or turns://USER:PASS@HOST[:PORT]";

[[noreturn]] void refuse(const std::string& url, const std::string& why, const char* setting = setting::kIceServers) {
  throw SettingError(Errc::kInvalidArgument, setting, "ICE server \"" + url + "\": " + why + "; " + kForms);
}

std::string lower(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return std::tolower(c); });
  return s;
}

int hexValue(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
}

// %XX decoding of one user-info part; false on a broken escape.
bool percentDecode(const std::string& in, std::string& out) {
  out.clear();
  for (std::size_t i = 0; i < in.size(); ++i) {
    if (in[i] != '%') {
      out += in[i];
      continue;
    }
    if (i + 2 >= in.size()) return false;
    const int hi = hexValue(in[i + 1]), lo = hexValue(in[i + 2]);
    if (hi < 0 || lo < 0) return false;
    out += static_cast<char>(hi * 16 + lo);
    i += 2;
  }
  return true;
}

std::string percentEncode(const std::string& in) {
  static constexpr char kHex[] = "0123456789ABCDEF";
  std::string out;
  for (unsigned char c : in) {
    if (std::isalnum(c) || c == '-' || c == '.' || c == '_' || c == '~') {
      out += static_cast<char>(c);
    } else {
      out += '%';
      out += kHex[c >> 4];
      out += kHex[c & 15];
    }
  }
  return out;
}

bool validHostName(const std::string& host) {
  if (host.empty() || host.size() > 253) return false;
  return std::all_of(host.begin(), host.end(),
                     [](unsigned char c) { return std::isalnum(c) || c == '-' || c == '.' || c == '_'; });
}

std::string hostPort(const IceServer& s) {
  const bool v6 = s.host.find(':') != std::string::npos;
  return (v6 ? "[" + s.host + "]" : s.host) + ":" + std::to_string(s.port);
}

const char* schemeName(IceServer::Scheme scheme) {
  switch (scheme) {
    case IceServer::Scheme::kStun:
      return "stun";
    case IceServer::Scheme::kTurn:
      return "turn";
    case IceServer::Scheme::kTurns:
      return "turns";
  }
  return "stun";
}

// A quoted-string (RFC 9110 §5.6.4): backslash before '"' and '\'.
std::string quoted(const std::string& s) {
  std::string out = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\') out += '\\';
    out += c;
  }
  return out + "\"";
}

}  // namespace

IceServer parseIceServer(const std::string& url) {
  IceServer s;
  const std::size_t colon = url.find(':');
  if (colon == std::string::npos) refuse(url, "no scheme");
  const std::string scheme = lower(url.substr(0, colon));
  if (scheme == "stun") {
    s.scheme = IceServer::Scheme::kStun;
  } else if (scheme == "turn") {
    s.scheme = IceServer::Scheme::kTurn;
  } else if (scheme == "turns") {
    s.scheme = IceServer::Scheme::kTurns;
    s.port = 5349;
    s.tcp = true;
  } else {
    refuse(url, "unknown scheme \"" + scheme + "\" (stun, turn or turns)");
  }
  std::string rest = url.substr(colon + 1);
  if (rest.rfind("//", 0) == 0) rest.erase(0, 2);

  std::string query;
  if (const std::size_t q = rest.find('?'); q != std::string::npos) {
    query = rest.substr(q + 1);
    rest.erase(q);
  }
  if (const std::size_t at = rest.rfind('@'); at != std::string::npos) {
    if (s.scheme == IceServer::Scheme::kStun) refuse(url, "a STUN server takes no USER:PASS");
    const std::string info = rest.substr(0, at);
    rest.erase(0, at + 1);
    const std::size_t sep = info.find(':');
    if (sep == std::string::npos || sep == 0) refuse(url, "the user info must be USER:PASS");
    if (!percentDecode(info.substr(0, sep), s.username) || !percentDecode(info.substr(sep + 1), s.password))
      refuse(url, "a broken %XX escape in USER:PASS");
    if (s.password.empty()) refuse(url, "the password is empty");
  }
  if (!rest.empty() && rest.back() == '/') rest.pop_back();

  std::string portText;
  if (!rest.empty() && rest.front() == '[') {
    const std::size_t close = rest.find(']');
    if (close == std::string::npos) refuse(url, "an IPv6 address without its closing ']'");
    s.host = rest.substr(1, close - 1);
    in6_addr v6{};
    if (::inet_pton(AF_INET6, s.host.c_str(), &v6) != 1)
      refuse(url, "\"" + s.host + "\" is not an IPv6 address");
    const std::string after = rest.substr(close + 1);
    if (!after.empty() && after.front() != ':') refuse(url, "unexpected \"" + after + "\" after the address");
    if (!after.empty()) portText = after.substr(1);
    if (!after.empty() && portText.empty()) refuse(url, "an empty port");
  } else {
    const std::size_t p = rest.find(':');
    s.host = rest.substr(0, p);
    if (p != std::string::npos) {
      portText = rest.substr(p + 1);
      if (portText.empty()) refuse(url, "an empty port");
    }
    if (!validHostName(s.host))
      refuse(url, s.host.empty() ? "no host" : "\"" + s.host + "\" is not a host name or address");
  }
  if (!portText.empty()) {
    if (portText.size() > 5 ||
        !std::all_of(portText.begin(), portText.end(), [](unsigned char c) { return std::isdigit(c); }))
      refuse(url, "the port \"" + portText + "\" is not a number");
    const int port = std::stoi(portText);
    if (port < 1 || port > 65535) refuse(url, "the port " + portText + " is out of range (1-65535)");
    s.port = static_cast<std::uint16_t>(port);
  }

  std::istringstream params(query);
  for (std::string param; std::getline(params, param, '&');) {
    if (param.empty()) continue;
    const std::string p = lower(param);
    if (s.scheme == IceServer::Scheme::kStun) refuse(url, "a STUN server takes no \"?" + param + "\"");
    if (p == "transport=tcp") {
      s.tcp = true;
    } else if (p == "transport=udp") {
      if (s.scheme == IceServer::Scheme::kTurns) refuse(url, "turns runs over TLS on TCP, not UDP");
      s.tcp = false;
    } else {
      refuse(url, "unknown parameter \"" + param + "\" (only transport=udp or transport=tcp)");
    }
  }
  return s;
}

IceCredentials turnRestCredentials(const std::string& secret, std::int64_t expiryUnix) {
  IceCredentials c;
  c.username = std::to_string(expiryUnix) + ":zerohop";
  GHmac* hmac = g_hmac_new(G_CHECKSUM_SHA1, reinterpret_cast<const guchar*>(secret.data()), secret.size());
  g_hmac_update(hmac, reinterpret_cast<const guchar*>(c.username.data()),
                static_cast<gssize>(c.username.size()));
  guint8 digest[20];
  gsize length = sizeof digest;
  g_hmac_get_digest(hmac, digest, &length);
  g_hmac_unref(hmac);
  gchar* b64 = g_base64_encode(digest, length);
  c.credential = b64;
  g_free(b64);
  return c;
}

std::string webrtcbinUrl(const IceServer& server, const IceCredentials& credentials) {
  std::string url = std::string(schemeName(server.scheme)) + "://";
  if (server.scheme != IceServer::Scheme::kStun)
    url += percentEncode(credentials.username) + ":" + percentEncode(credentials.credential) + "@";
  url += hostPort(server);
  if (server.scheme == IceServer::Scheme::kTurn && server.tcp) url += "?transport=tcp";
  return url;
}

std::string iceServerLink(const IceServer& server, const IceCredentials& credentials) {
  std::string uri = std::string(schemeName(server.scheme)) + ":" + hostPort(server);
  if (server.scheme != IceServer::Scheme::kStun) uri += server.tcp ? "?transport=tcp" : "?transport=udp";
  std::string link = "<" + uri + ">; rel=\"ice-server\"";
  if (server.scheme != IceServer::Scheme::kStun) {
    link += "; username=" + quoted(credentials.username) + "; credential=" + quoted(credentials.credential) +
            "; credential-type=\"password\"";
  }
  return link;
}

IceServers::IceServers(const std::vector<std::string>& urls, std::string turnSecret,
                       std::uint32_t credentialSeconds)
    : secret_(std::move(turnSecret)), credentialSeconds_(credentialSeconds) {
  for (const std::string& url : urls) {
    IceServer s = parseIceServer(url);
    if (s.scheme != IceServer::Scheme::kStun && s.username.empty() && secret_.empty()) {
      refuse(url, "a TURN server needs USER:PASS, or a TURN shared secret for time-limited credentials",
             setting::kTurnSecret);
    }
    servers_.push_back(std::move(s));
  }
  if (!secret_.empty() && credentialSeconds_ == 0)
    throw Error(Errc::kInvalidArgument,
                "TURN credentials valid for 0 s would never work; give them some lifetime");
}

SessionIceServers IceServers::forSession(std::int64_t nowUnix) const {
  SessionIceServers out;
  const IceCredentials rest =
      secret_.empty() ? IceCredentials{} : turnRestCredentials(secret_, nowUnix + credentialSeconds_);
  for (const IceServer& s : servers_) {
    const IceCredentials creds = s.username.empty() ? rest : IceCredentials{s.username, s.password};
    if (s.scheme == IceServer::Scheme::kStun) {
      if (out.stunServer.empty()) out.stunServer = webrtcbinUrl(s, creds);
    } else {
      out.turnServers.push_back(webrtcbinUrl(s, creds));
    }
    out.linkHeaders.push_back(iceServerLink(s, creds));
  }
  return out;
}

namespace {

// The value of parameter `name` in the parameters of one link ("; a=b; c=\"d\""), empty when absent.
std::string linkParam(const std::string& params, const std::string& name) {
  std::size_t i = 0;
  while ((i = params.find(';', i)) != std::string::npos) {
    ++i;
    while (i < params.size() && params[i] == ' ') ++i;
    const std::size_t eq = params.find('=', i);
    if (eq == std::string::npos) return {};
    std::string key = params.substr(i, eq - i);
    while (!key.empty() && key.back() == ' ') key.pop_back();
    std::size_t v = eq + 1;
    while (v < params.size() && params[v] == ' ') ++v;
    std::string value;
    if (v < params.size() && params[v] == '"') {
      for (++v; v < params.size() && params[v] != '"'; ++v) {
        if (params[v] == '\\' && v + 1 < params.size()) ++v;
        value += params[v];
      }
    } else {
      const std::size_t end = params.find(';', v);
      value = params.substr(v, end == std::string::npos ? std::string::npos : end - v);
      while (!value.empty() && value.back() == ' ') value.pop_back();
    }
    if (lower(key) == name) return value;
    i = v;
  }
  return {};
}

}  // namespace

SessionIceServers iceServersFromLinks(const std::vector<std::string>& linkValues, std::size_t& skipped) {
  SessionIceServers out;
  skipped = 0;
  for (const std::string& header : linkValues) {
    // Links are "<uri>; params" separated by commas outside <> and quotes.
    std::vector<std::string> links;
    std::string cur;
    bool inUri = false, inQuote = false, escaped = false;
    for (char c : header) {
      if (escaped) {
        escaped = false;
        cur += c;
        continue;
      }
      if (c == '\\' && inQuote) escaped = true;
      if (c == '<' && !inQuote) inUri = true;
      if (c == '>' && !inQuote) inUri = false;
      if (c == '"' && !inUri) inQuote = !inQuote;
      if (c == ',' && !inUri && !inQuote) {
        links.push_back(cur);
        cur.clear();
      } else {
        cur += c;
      }
    }
    links.push_back(cur);
    for (const std::string& link : links) {
      const std::size_t open = link.find('<'), close = link.find('>');
      if (open == std::string::npos || close == std::string::npos || close < open) continue;
      const std::string params = link.substr(close + 1);
      if (lower(linkParam(params, "rel")) != "ice-server") continue;
      try {
        IceServer s = parseIceServer(link.substr(open + 1, close - open - 1));
        const IceCredentials creds{linkParam(params, "username"), linkParam(params, "credential")};
        if (s.scheme == IceServer::Scheme::kStun) {
          if (out.stunServer.empty()) out.stunServer = webrtcbinUrl(s, creds);
        } else if (creds.username.empty() || creds.credential.empty()) {
          ++skipped;  // a TURN server without credentials is of no use
        } else {
          out.turnServers.push_back(webrtcbinUrl(s, creds));
        }
      } catch (const Error&) {
        ++skipped;
      }
    }
  }
  return out;
}

std::string advertiseHostAddress(const std::string& sdp, const std::string& address) {
  if (address.empty()) return sdp;
  std::string out;
  std::size_t pos = 0;
  while (pos < sdp.size()) {
    std::size_t end = sdp.find('\n', pos);
    end = end == std::string::npos ? sdp.size() : end + 1;
    std::string line = sdp.substr(pos, end - pos);
    pos = end;
    // a=candidate:<foundation> <component> <transport> <priority> <address> <port> typ host ...
    if (line.rfind("a=candidate:", 0) == 0 && line.find(" typ host") != std::string::npos) {
      std::size_t field = 0, start = 0;
      for (std::size_t i = 0; i <= line.size() && field < 4; ++i) {
        if (i < line.size() && line[i] == ' ') {
          ++field;
          start = i + 1;
        }
      }
      const std::size_t stop = line.find(' ', start);
      if (field == 4 && stop != std::string::npos) line = line.substr(0, start) + address + line.substr(stop);
    }
    out += line;
  }
  return out;
}

}  // namespace zerohop::stream
