// ICE servers and addresses on the WHEP front, with real webrtcbin sessions on
// loopback: the Link headers a player gets (RFC 9725 §4.6), a TURN server that never answers (the
// answer still comes, with the direct candidates), --ice-host and --udp-ports in the answer's candidates.

#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <httplib.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <mutex>
#include <regex>
#include <string>

#include "stream/webrtc_warmup.hpp"
#include "test_sdp.hpp"
#include "test_server.hpp"
#include "zerohop/error.hpp"
#include "zerohop/log.hpp"
#include "zerohop/setting_error.hpp"
#include "zerohop/stream_server.hpp"

namespace zerohop {
namespace {

using test::clientFor;
using test::loopbackConfig;

// A UDP socket on 127.0.0.1 that receives and never answers: a TURN server that is down.
class SilentUdpPort {
 public:
  SilentUdpPort() : fd_(::socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0)) {
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t len = sizeof a;
    if (fd_ >= 0 && ::bind(fd_, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0 &&
        ::getsockname(fd_, reinterpret_cast<sockaddr*>(&a), &len) == 0)
      port_ = ntohs(a.sin_port);
  }
  ~SilentUdpPort() {
    if (fd_ >= 0) ::close(fd_);
  }
  std::uint16_t port() const { return port_; }

 private:
  int fd_;
  std::uint16_t port_ = 0;
};

std::vector<std::string> linkHeaders(const httplib::Response& r) {
  std::vector<std::string> out;
  for (std::size_t i = 0; i < r.get_header_value_count("Link"); ++i)
    out.push_back(r.get_header_value("Link", i));
  return out;
}

TEST(WhepIce, ServersReachThePlayerAsLinkHeadersAndADeadTurnServerDoesNotStopTheAnswer) {
  std::mutex logMutex;
  std::string logged;
  log::setSink([&](log::Level, std::string_view line) {
    std::lock_guard lock(logMutex);
    logged.append(line).append("\n");
  });
  struct SinkReset {
    ~SinkReset() { log::setSink({}); }
  } resetSink;
  SilentUdpPort deadTurn;
  ASSERT_NE(deadTurn.port(), 0);
  StreamConfig c = loopbackConfig();
  const std::string turn = "127.0.0.1:" + std::to_string(deadTurn.port());
  c.iceServers = {"stun://127.0.0.1:" + std::to_string(deadTurn.port()), "turn://" + turn};
  c.turnSecret = "s3cret";
  c.whepToken = "tok";
  StreamServer server(c);
  auto cli = clientFor(server);
  const httplib::Headers auth{{"Authorization", "Bearer tok"}};

  // Before the offer (the viewer page asks first): OPTIONS with the token lists them, a preflight
  // (no token) does not.
  auto options = cli.Options("/whep", auth);
  ASSERT_TRUE(options);
  EXPECT_EQ(options->status, 200);
  const auto before = linkHeaders(*options);
  ASSERT_EQ(before.size(), 2u);
  EXPECT_EQ(before[0], "<stun:" + turn + ">; rel=\"ice-server\"");
  EXPECT_TRUE(
      std::regex_match(before[1], std::regex("<turn:" + turn +
                                             R"(\?transport=udp>; rel="ice-server"; )"
                                             R"(username="[0-9]+:zerohop"; credential="[A-Za-z0-9+/]+=*"; )"
                                             R"(credential-type="password")")))
      << before[1];
  auto preflight = cli.Options("/whep");
  ASSERT_TRUE(preflight);
  EXPECT_TRUE(linkHeaders(*preflight).empty()) << "credentials went to a request without the token";

  // The clock is for the TURN server's deadline: a POST during the server's WebRTC warm-up also waits
  // for that (the DTLS key, 2-4 s under ASan on a busy box) before its own deadline starts.
  stream::waitForStartedWarmUp();
  const auto start = std::chrono::steady_clock::now();
  auto r = cli.Post("/whep", auth, test::chromiumOffer(), "application/sdp");
  const auto took = std::chrono::steady_clock::now() - start;
  ASSERT_TRUE(r);
  ASSERT_EQ(r->status, 201) << r->body;
  EXPECT_LT(took, std::chrono::milliseconds(4500))
      << "the dead TURN server held the answer past the deadline";
  EXPECT_EQ(linkHeaders(*r).size(), 2u);
  EXPECT_NE(r->get_header_value("Access-Control-Expose-Headers").find("Link"), std::string::npos);
  // The direct path is still offered.
  EXPECT_TRUE(std::regex_search(r->body, std::regex("a=candidate:.* 127\\.0\\.0\\.1 [0-9]+ typ host")))
      << r->body;
  EXPECT_EQ(cli.Delete(r->get_header_value("Location"), auth)->status, 200);
  // The log says why there is no relay, and never shows the credentials.
  std::lock_guard lock(logMutex);
  EXPECT_NE(logged.find("no relay candidate from the TURN server(s)"), std::string::npos) << logged;
  EXPECT_EQ(logged.find(":zerohop"), std::string::npos) << "a TURN username reached the log:\n" << logged;
}

TEST(WhepIce, IceHostAndUdpPortsShapeTheHostCandidates) {
  StreamConfig c = loopbackConfig();
  c.iceHost = "203.0.113.7";
  c.udpPortMin = 41000;
  c.udpPortMax = 41009;
  StreamServer server(c);
  auto cli = clientFor(server);
  auto r = cli.Post("/whep", test::chromiumOffer(), "application/sdp");
  ASSERT_TRUE(r);
  ASSERT_EQ(r->status, 201) << r->body;
  const std::regex host(R"(a=candidate:\S+ 1 \S+ [0-9]+ (\S+) ([0-9]+) typ host)");
  int hosts = 0;
  for (auto it = std::sregex_iterator(r->body.begin(), r->body.end(), host); it != std::sregex_iterator();
       ++it) {
    ++hosts;
    EXPECT_EQ((*it)[1].str(), "203.0.113.7") << r->body;
    const int port = std::stoi((*it)[2].str());
    EXPECT_GE(port, 41000) << r->body;
    EXPECT_LE(port, 41009) << r->body;
  }
  EXPECT_GT(hosts, 0) << r->body;
  EXPECT_TRUE(linkHeaders(*r).empty());
}

// Each refusal names the setting to change (SettingError::setting(), which the CLI turns into its flag)
// and says what is wrong in the library's words, without a CLI flag.
TEST(WhepIce, BadIceSettingsAreRefusedAtStart) {
  auto refused = [](StreamConfig c, const char* setting, const char* says) {
    try {
      StreamServer s(c);
      ADD_FAILURE() << "accepted a config with a bad " << setting;
    } catch (const Error& e) {
      EXPECT_EQ(e.code(), Errc::kInvalidArgument) << e.what();
      EXPECT_NE(std::string(e.what()).find(says), std::string::npos) << e.what();
      EXPECT_EQ(std::string(e.what()).find("--"), std::string::npos) << "a CLI flag in a library message: " << e.what();
      const auto* about = dynamic_cast<const SettingError*>(&e);
      ASSERT_NE(about, nullptr) << e.what();
      EXPECT_EQ(about->setting(), setting) << e.what();
    }
  };
  StreamConfig url = loopbackConfig();
  url.iceServers = {"turn:/host"};
  refused(url, setting::kIceServers, "ICE server \"turn:/host\"");
  StreamConfig noCredentials = loopbackConfig();
  noCredentials.iceServers = {"turn://host:3478"};
  refused(noCredentials, setting::kTurnSecret, "TURN shared secret");
  StreamConfig host = loopbackConfig();
  host.iceHost = "my.public.name";
  refused(host, setting::kIceHost, "is not an IPv4 or IPv6 address");
  StreamConfig ports = loopbackConfig();
  ports.udpPortMin = 5000;
  ports.udpPortMax = 4000;
  refused(ports, setting::kUdpPorts, "UDP port range 5000-4000");
}

}  // namespace
}  // namespace zerohop
