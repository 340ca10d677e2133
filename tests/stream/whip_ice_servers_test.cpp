// The WHIP publisher's session gets the configured STUN/TURN servers (serve --ice-server) and those the
// endpoint names in Link rel="ice-server" headers (RFC 9725 §4.6): an OPTIONS answer's for the session
// that follows it, a 201's from the next session on. The endpoint is a stub: it answers 201 with a
// Location, the Link header and an answer webrtcbin refuses, so every session fails after its POST and
// the publisher reconnects (back-off 50-100 ms).
#include <gtest/gtest.h>
#include <httplib.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <thread>

#include "stream/glib_loop_thread.hpp"
#include "stream/whip_publisher.hpp"

namespace zerohop::stream {
namespace {

bool has(const std::vector<std::string>& v, const std::string& s) { return std::find(v.begin(), v.end(), s) != v.end(); }

// Runs a publisher against the stub until `posts` POSTs arrived and the session's TURN servers include
// `want`; returns what the latest session was given.
SessionIceServers publishUntil(bool linksOnOptions, int posts, const std::string& want) {
  httplib::Server endpoint;
  std::atomic<int> posted{0};
  const std::string link = "<turn:127.0.0.1:3479?transport=udp>; rel=\"ice-server\"; username=\"ep\"; "
                           "credential=\"pw\"; credential-type=\"password\"";
  endpoint.Options("/whip", [&](const httplib::Request&, httplib::Response& res) {
    res.status = 204;
    if (linksOnOptions) res.set_header("Link", link);
  });
  endpoint.Post("/whip", [&](const httplib::Request&, httplib::Response& res) {
    ++posted;
    res.status = 201;
    res.set_header("Location", "/whip/r1");
    if (!linksOnOptions) res.set_header("Link", link);
    res.set_content("v=0\r\n", "application/sdp");
  });
  endpoint.Delete("/whip/r1", [](const httplib::Request&, httplib::Response& res) { res.status = 200; });
  const int port = endpoint.bind_to_any_port("127.0.0.1");
  if (port <= 0) return {};
  std::thread serving([&] { endpoint.listen_after_bind(); });
  SessionIceServers ice;
  {
    GlibLoopThread loop;
    WhipPublisher::Options o;
    o.url = "http://127.0.0.1:" + std::to_string(port) + "/whip";
    o.minBackoff = std::chrono::milliseconds(50);
    o.maxBackoff = std::chrono::milliseconds(100);
    o.iceServers = IceServers({"stun://127.0.0.1:3480", "turn://u:p@127.0.0.1:3478"}, "", 86400);
    WhipPublisher publisher(o, {}, loop);
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
    while (std::chrono::steady_clock::now() < deadline) {
      ice = publisher.lastSessionIce();
      if (posted.load() >= posts && has(ice.turnServers, want)) break;
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    EXPECT_GE(posted.load(), posts) << "the publisher did not POST " << posts << " time(s)";
  }
  endpoint.stop();
  serving.join();
  return ice;
}

const std::string kConfigured = "turn://u:p@127.0.0.1:3478";
const std::string kFromEndpoint = "turn://ep:pw@127.0.0.1:3479";

TEST(WhipIceServers, ConfiguredServersAndTheOptionsLinkHeadersReachTheFirstSession) {
  const SessionIceServers ice = publishUntil(true, 1, kFromEndpoint);
  EXPECT_EQ(ice.stunServer, "stun://127.0.0.1:3480");
  ASSERT_EQ(ice.turnServers.size(), 2u);
  EXPECT_EQ(ice.turnServers[0], kConfigured) << "the configured server comes first";
  EXPECT_EQ(ice.turnServers[1], kFromEndpoint);
}

TEST(WhipIceServers, The201sLinkHeadersReachTheNextSession) {
  const SessionIceServers ice = publishUntil(false, 2, kFromEndpoint);
  EXPECT_EQ(ice.stunServer, "stun://127.0.0.1:3480");
  ASSERT_EQ(ice.turnServers.size(), 2u);
  EXPECT_EQ(ice.turnServers[0], kConfigured);
  EXPECT_EQ(ice.turnServers[1], kFromEndpoint);
}

}  // namespace
}  // namespace zerohop::stream
