// --ice-server URLs, TURN REST credentials, the forms webrtcbin and WHEP players get them in, and the
// --ice-host rewrite of host candidates (pure logic, src/stream/ice_servers.cpp).

#include "stream/ice_servers.hpp"

#include <gtest/gtest.h>

#include <string>

#include "zerohop/error.hpp"

namespace zerohop::stream {
namespace {

TEST(IceServers, ParsesEachForm) {
  IceServer stun = parseIceServer("stun://stun.example.net:19302");
  EXPECT_EQ(stun.scheme, IceServer::Scheme::kStun);
  EXPECT_EQ(stun.host, "stun.example.net");
  EXPECT_EQ(stun.port, 19302);
  EXPECT_EQ(parseIceServer("stun:10.0.0.1").port, 3478);  // RFC 7064 form, default port

  IceServer turn = parseIceServer("turn://al%40ice:p%3Ass@10.0.0.2:3479?transport=tcp");
  EXPECT_EQ(turn.scheme, IceServer::Scheme::kTurn);
  EXPECT_EQ(turn.username, "al@ice");
  EXPECT_EQ(turn.password, "p:ss");
  EXPECT_EQ(turn.port, 3479);
  EXPECT_TRUE(turn.tcp);
  EXPECT_FALSE(parseIceServer("turn:u:p@h").tcp);

  IceServer turns = parseIceServer("turns://u:p@[2001:db8::1]");
  EXPECT_EQ(turns.scheme, IceServer::Scheme::kTurns);
  EXPECT_EQ(turns.host, "2001:db8::1");
  EXPECT_EQ(turns.port, 5349);
  EXPECT_TRUE(turns.tcp);
  EXPECT_TRUE(parseIceServer("turn://turn.example.net").username.empty());  // credentials from the secret
}

TEST(IceServers, MalformedUrlsAreRefusedNamingTheProblem) {
  struct Case {
    const char* url;
    const char* why;
  } cases[] = {
      {"stun.example.net", "no scheme"},
      {"http://stun.example.net", "unknown scheme"},
      {"stun://", "no host"},
      {"stun://u:p@host", "takes no USER:PASS"},
      {"stun://host?transport=tcp", "takes no"},
      {"turn://u@host", "USER:PASS"},
      {"turn://u:@host", "password is empty"},
      {"turn://u:p%zz@host", "%XX"},
      {"turn://u:p@host:0", "out of range"},
      {"turn://u:p@host:99999", "out of range"},
      {"turn://u:p@host:34x", "not a number"},
      {"turn://u:p@host:", "empty port"},
      {"turn://u:p@ho st", "not a host name"},
      {"turn://u:p@[::1", "closing ']'"},
      {"turn://u:p@[nope]:3478", "not an IPv6"},
      {"turn://u:p@host?transport=sctp", "unknown parameter"},
      {"turns://u:p@host?transport=udp", "TLS on TCP"},
  };
  for (const auto& c : cases) {
    try {
      parseIceServer(c.url);
      ADD_FAILURE() << "accepted " << c.url;
    } catch (const Error& e) {
      EXPECT_EQ(e.code(), Errc::kInvalidArgument) << c.url;
      const std::string what = e.what();
      EXPECT_NE(what.find(c.why), std::string::npos) << c.url << ": " << what;
      EXPECT_NE(what.find("ICE server \""), std::string::npos) << what;
      EXPECT_EQ(what.find("--"), std::string::npos) << "the library's terms, not a CLI flag: " << what;
      EXPECT_NE(what.find("turn://USER:PASS@HOST"), std::string::npos) << what;
    }
  }
  // A TURN server without credentials needs the secret.
  EXPECT_THROW(IceServers({"turn://host"}, "", 86400), Error);
  EXPECT_NO_THROW(IceServers({"turn://host"}, "s3cret", 86400));
}

TEST(IceServers, TurnRestCredentialsAreTheHmacOfTheExpiry) {
  // python3: base64(hmac.new(b"s3cret", b"1700000000:zerohop", hashlib.sha1).digest())
  const IceCredentials c = turnRestCredentials("s3cret", 1700000000);
  EXPECT_EQ(c.username, "1700000000:zerohop");
  EXPECT_EQ(c.credential, "WLRotq4QKYdIWkL8qIe4JxBeQEE=");
}

TEST(IceServers, WebrtcbinAndLinkHeaderForms) {
  const IceServers servers({"stun://10.0.0.1:3478", "turn://10.0.0.2:3478",
                            "turn://u:p%22w@10.0.0.3?transport=tcp", "stun://10.0.0.9"},
                           "s3cret", 300);
  const SessionIceServers s = servers.forSession(1699999700);
  EXPECT_EQ(s.stunServer, "stun://10.0.0.1:3478");  // webrtcbin takes one STUN server: the first
  ASSERT_EQ(s.turnServers.size(), 2u);
  // The REST username's ':' is escaped in the user info; webrtcbin unescapes it.
  EXPECT_EQ(s.turnServers[0], "turn://1700000000%3Azerohop:WLRotq4QKYdIWkL8qIe4JxBeQEE%3D@10.0.0.2:3478");
  EXPECT_EQ(s.turnServers[1], "turn://u:p%22w@10.0.0.3:3478?transport=tcp");
  ASSERT_EQ(s.linkHeaders.size(), 4u);  // every server goes to the player
  EXPECT_EQ(s.linkHeaders[0], "<stun:10.0.0.1:3478>; rel=\"ice-server\"");
  EXPECT_EQ(s.linkHeaders[1],
            "<turn:10.0.0.2:3478?transport=udp>; rel=\"ice-server\"; username=\"1700000000:zerohop\"; "
            "credential=\"WLRotq4QKYdIWkL8qIe4JxBeQEE=\"; credential-type=\"password\"");
  EXPECT_EQ(s.linkHeaders[2],
            "<turn:10.0.0.3:3478?transport=tcp>; rel=\"ice-server\"; username=\"u\"; credential=\"p\\\"w\"; "
            "credential-type=\"password\"");
  EXPECT_EQ(iceServerLink(parseIceServer("turns://u:p@[2001:db8::1]:443"), {"u", "p"}),
            "<turns:[2001:db8::1]:443?transport=tcp>; rel=\"ice-server\"; username=\"u\"; credential=\"p\"; "
            "credential-type=\"password\"");
}

TEST(IceServers, WhipEndpointLinkHeadersBecomeWebrtcbinUrls) {
  // Two headers, the second holding two links; a non-ICE link, a TURN link without credentials and a
  // malformed URI are passed over (the last two counted).
  const std::vector<std::string> links = {
      "<stun:10.0.0.1:3478>; rel=\"ice-server\"",
      "<turn:10.0.0.2:3478?transport=udp>; rel=\"ice-server\"; username=\"1700000000:x\"; "
      "credential=\"a,b\\\"c\"; credential-type=\"password\", <https://example.org/>; rel=\"help\"",
      "<turn:10.0.0.3:3478>; rel=\"ice-server\", <turn:[10.0.0.4>; rel=\"ice-server\"; username=u; credential=p",
      "<turns:10.0.0.5:443?transport=tcp>; REL=ice-server; username=u; credential=p"};
  std::size_t skipped = 0;
  const SessionIceServers s = iceServersFromLinks(links, skipped);
  EXPECT_EQ(s.stunServer, "stun://10.0.0.1:3478");
  ASSERT_EQ(s.turnServers.size(), 2u);
  EXPECT_EQ(s.turnServers[0], "turn://1700000000%3Ax:a%2Cb%22c@10.0.0.2:3478");
  EXPECT_EQ(s.turnServers[1], "turns://u:p@10.0.0.5:443");
  EXPECT_EQ(skipped, 2u);
  EXPECT_TRUE(s.linkHeaders.empty());
  EXPECT_TRUE(iceServersFromLinks({}, skipped).turnServers.empty());
  EXPECT_EQ(skipped, 0u);
}

TEST(IceServers, IceHostReplacesOnlyHostCandidateAddresses) {
  const std::string sdp =
      "v=0\r\n"
      "a=candidate:1 1 UDP 2015363327 10.1.2.3 40001 typ host\r\n"
      "a=candidate:2 1 UDP 1015363327 198.51.100.1 3478 typ relay raddr 10.1.2.3 rport 40002\r\n"
      "a=candidate:3 1 TCP 1010000000 10.1.2.3 9 typ host tcptype active\r\n"
      "a=mid:video0\r\n";
  const std::string out = advertiseHostAddress(sdp, "203.0.113.7");
  EXPECT_NE(out.find("a=candidate:1 1 UDP 2015363327 203.0.113.7 40001 typ host\r\n"), std::string::npos)
      << out;
  EXPECT_NE(out.find("198.51.100.1 3478 typ relay raddr 10.1.2.3"), std::string::npos) << out;
  EXPECT_NE(out.find("a=candidate:3 1 TCP 1010000000 203.0.113.7 9 typ host"), std::string::npos) << out;
  EXPECT_NE(out.find("a=mid:video0\r\n"), std::string::npos);
  EXPECT_EQ(advertiseHostAddress(sdp, ""), sdp);
}

}  // namespace
}  // namespace zerohop::stream
