#pragma once
// ICE servers (STUN/TURN) for the viewers' sessions and for the WHEP players.
// One URL form on the command line, `serve --ice-server`:
//   stun://HOST[:PORT]                      (also stun:HOST[:PORT], RFC 7064)
//   turn://USER:PASS@HOST[:PORT][?transport=udp|tcp]   (also turn:..., RFC 7065)
//   turns://USER:PASS@HOST[:PORT][?transport=tcp]      (TURN over TLS)
// A TURN server given without USER:PASS takes time-limited credentials from a shared secret (the TURN
// REST API, draft-uberti-behave-turn-rest-00, coturn's use-auth-secret): username
// "<expiry unix time>:zerohop", credential base64(HMAC-SHA1(secret, username)).
// Each server is written twice: as webrtcbin takes it (stun-server / add-turn-server: a URL with the
// credentials percent-encoded in its user info) and as RFC 9725 §4.6 gives it to a WHEP player, a
// `Link: <turn:HOST:PORT?transport=udp>; rel="ice-server"; username="..."; credential="..."` header.
// Pure logic: no sockets, no GStreamer. Thread-safety: reentrant; IceServers is immutable after
// construction (thread-safe to share).

#include <cstdint>
#include <string>
#include <vector>

namespace zerohop::stream {

struct IceServer {
  enum class Scheme { kStun, kTurn, kTurns };
  Scheme scheme = Scheme::kStun;
  std::string host;           ///< name or address; an IPv6 address without brackets
  std::uint16_t port = 3478;  ///< 3478 by default, 5349 for turns
  std::string username;       ///< decoded; empty for STUN, or for TURN with the shared secret
  std::string password;
  bool tcp = false;  ///< ?transport=tcp (always true for turns)
};

/// Parses one --ice-server URL. Throws Error(kInvalidArgument) naming what is wrong and the forms above.
IceServer parseIceServer(const std::string& url);

struct IceCredentials {
  std::string username;
  std::string credential;
};

/// TURN REST API credentials valid until `expiryUnix` (seconds since the epoch).
IceCredentials turnRestCredentials(const std::string& secret, std::int64_t expiryUnix);

/// What one session's webrtcbin gets and what its player is told.
struct SessionIceServers {
  std::string stunServer;                ///< webrtcbin "stun-server" (webrtcbin takes one), or empty
  std::vector<std::string> turnServers;  ///< webrtcbin "add-turn-server", one each
  std::vector<std::string> linkHeaders;  ///< the values of the Link headers of the 201
};

/// The configured servers, checked once (Error(kInvalidArgument) for a bad URL, or a TURN server
/// without credentials and no secret), then made into each session's URLs and Link headers.
class IceServers {
 public:
  IceServers() = default;
  IceServers(const std::vector<std::string>& urls, std::string turnSecret, std::uint32_t credentialSeconds);

  bool empty() const { return servers_.empty(); }
  /// Credentials from the secret expire `credentialSeconds` after `nowUnix`.
  SessionIceServers forSession(std::int64_t nowUnix) const;

 private:
  std::vector<IceServer> servers_;
  std::string secret_;
  std::uint32_t credentialSeconds_ = 0;
};

/// The URL webrtcbin takes: stun://HOST:PORT, or turn[s]://USER:PASS@HOST:PORT[?transport=tcp] with
/// USER and PASS percent-encoded (a TURN REST username holds a ':').
std::string webrtcbinUrl(const IceServer& server, const IceCredentials& credentials);
/// One Link header value (RFC 9725 §4.6, RFC 8288): <stun:HOST:PORT>; rel="ice-server" for STUN,
/// plus username, credential and credential-type="password" for TURN.
std::string iceServerLink(const IceServer& server, const IceCredentials& credentials);

/// The ICE servers of a WHIP endpoint's 201 (RFC 9725 §4.6): every `<URI>; rel="ice-server"` link of
/// `linkValues` (Link header values, each possibly holding several comma-separated links) whose URI is
/// stun:/turn:/turns: and, for TURN, has username and credential parameters, made into webrtcbin URLs
/// (stunServer: the first STUN one). Other links and ones we cannot read are passed over; `skipped`
/// counts the rel="ice-server" ones passed over. linkHeaders stays empty.
SessionIceServers iceServersFromLinks(const std::vector<std::string>& linkValues, std::size_t& skipped);

/// `sdp` with the connection address of every host candidate replaced by `address` (serve --ice-host:
/// a 1:1 NAT such as a cloud VM's public address, which this host cannot see; the ports stay). Other
/// candidates and lines are unchanged. Empty `address`: `sdp` as it is.
std::string advertiseHostAddress(const std::string& sdp, const std::string& address);

}  // namespace zerohop::stream
