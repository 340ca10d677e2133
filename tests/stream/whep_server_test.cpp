// StreamServer's HTTP/WHEP front on loopback, with real webrtcbin sessions behind it.

#include <arpa/inet.h>
#include <glib.h>
#include <gtest/gtest.h>
#include <httplib.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <future>
#include <regex>
#include <string>

#include "test_sdp.hpp"
#include "test_server.hpp"
#include "zerohop/error.hpp"
#include "zerohop/setting_error.hpp"
#include "zerohop/stream_server.hpp"

namespace zerohop {
namespace {

using test::clientFor;
using test::loopbackConfig;

TEST(WhepServer, ChromiumOfferGetsSendonlyH264AnswerWithLoopbackCandidate) {
  StreamServer server(loopbackConfig());
  EXPECT_EQ(server.url(), "http://127.0.0.1:" + std::to_string(server.port()) + "/");
  auto cli = clientFor(server);
  const std::string offer = test::chromiumOffer();
  const int pt = test::offered42e01fPayloadType(offer);
  ASSERT_GT(pt, 0);

  auto r = cli.Post("/whep", offer, "application/sdp");
  ASSERT_TRUE(r) << httplib::to_string(r.error());
  ASSERT_EQ(r->status, 201) << r->body;
  EXPECT_EQ(r->get_header_value("Content-Type"), "application/sdp");
  EXPECT_EQ(r->get_header_value("Access-Control-Allow-Origin"), "*");
  const std::string exposed = r->get_header_value("Access-Control-Expose-Headers");
  EXPECT_NE(exposed.find("Location"), std::string::npos) << exposed;
  EXPECT_NE(exposed.find("ETag"), std::string::npos) << exposed;
  const std::string location = r->get_header_value("Location");
  EXPECT_TRUE(std::regex_match(location, std::regex("/whep/[0-9a-f]{32}"))) << location;
  // A strong entity-tag naming the ICE session (RFC 9725 §4.3.1).
  EXPECT_EQ(r->get_header_value("ETag"), "\"" + location.substr(6) + "\"");
  EXPECT_EQ(server.viewerCount(), 1u);

  const std::string& answer = r->body;
  const std::string p = std::to_string(pt);
  EXPECT_NE(answer.find("a=sendonly"), std::string::npos) << answer;
  EXPECT_EQ(answer.find("a=recvonly"), std::string::npos) << answer;
  EXPECT_EQ(answer.find("a=sendrecv"), std::string::npos) << answer;
  EXPECT_TRUE(std::regex_search(answer, std::regex("m=video [1-9][0-9]* UDP/TLS/RTP/SAVPF " + p + "( |\r)")))
      << answer;
  EXPECT_NE(answer.find("a=rtpmap:" + p + " H264/90000"), std::string::npos) << answer;
  EXPECT_TRUE(std::regex_search(answer, std::regex("a=fmtp:" + p + " .*profile-level-id=42e01f"))) << answer;
  EXPECT_TRUE(std::regex_search(answer, std::regex("a=fmtp:" + p + " .*packetization-mode=1"))) << answer;
  // RFC 6184 §8.2.2: Chromium offers level-asymmetry-allowed=1, and the answer says it too.
  EXPECT_TRUE(std::regex_search(answer, std::regex("a=fmtp:" + p + " .*level-asymmetry-allowed=1"))) << answer;
  EXPECT_NE(answer.find("a=rtcp-fb:" + p + " nack\r"), std::string::npos) << answer;
  EXPECT_NE(answer.find("a=rtcp-fb:" + p + " nack pli"), std::string::npos) << answer;
  EXPECT_TRUE(
      std::regex_search(answer, std::regex("a=candidate:.* (udp|UDP) .* 127\\.0\\.0\\.1 [0-9]+ typ host")))
      << answer;
  EXPECT_NE(answer.find("a=fingerprint:"), std::string::npos);
  // The media SSRC is named before any media flows, and RTX (offered by Chromium) is paired with it.
  std::smatch fid;
  ASSERT_TRUE(std::regex_search(answer, fid, std::regex("a=ssrc-group:FID ([0-9]+) ([0-9]+)"))) << answer;
  EXPECT_NE(fid[1].str(), "0") << answer;
  EXPECT_NE(answer.find("a=ssrc:" + fid[1].str() + " cname:"), std::string::npos) << answer;
  EXPECT_TRUE(std::regex_search(answer, std::regex("a=rtpmap:[0-9]+ rtx/90000"))) << answer;
  EXPECT_NE(answer.find("a=setup:active"), std::string::npos) << answer;  // offer was actpass

  // The session URL has no representation: GET and HEAD answer 200 with no content (RFC 9725 §4.1).
  auto get = cli.Get(location);
  ASSERT_TRUE(get);
  EXPECT_EQ(get->status, 200);
  EXPECT_TRUE(get->body.empty()) << get->body;
  auto head = cli.Head(location);
  ASSERT_TRUE(head);
  EXPECT_EQ(head->status, 200);

  // Trickle is not implemented: 501 with the reason (RFC 9725 §4.3.1); then the session ends on
  // DELETE, once, and its URL is gone for GET too.
  auto patch = cli.Patch(location, "a=candidate:1 1 udp 1 127.0.0.1 9 typ host\r\n",
                         "application/trickle-ice-sdpfrag");
  ASSERT_TRUE(patch);
  EXPECT_EQ(patch->status, 501);
  EXPECT_NE(patch->body.find("trickle"), std::string::npos);
  EXPECT_EQ(server.viewerCount(), 1u) << "a refused PATCH must not end the session";
  auto del = cli.Delete(location);
  ASSERT_TRUE(del);
  EXPECT_EQ(del->status, 200);
  EXPECT_EQ(server.viewerCount(), 0u);
  auto again = cli.Delete(location);
  ASSERT_TRUE(again);
  EXPECT_EQ(again->status, 404);
  auto gone = cli.Get(location);
  ASSERT_TRUE(gone);
  EXPECT_EQ(gone->status, 404);
}

// The endpoint's methods as RFC 9725 (WHIP) and draft-ietf-wish-whep-03 have them, checked with a
// plain HTTP client: GET/HEAD 2xx with no content (§4.1), OPTIONS 200 with Accept-Post, methods it
// does not define 405 with an Allow that names what it does, never 404.
TEST(WhepServer, ViewerStatsSayWhenTheOfferedLevelDoesNotCoverTheStream) {
  StreamServer server(loopbackConfig());
  auto cli = clientFor(server);
  auto r = cli.Post("/whep", test::chromiumOffer(), "application/sdp");
  ASSERT_TRUE(r && r->status == 201);
  auto stats = server.viewerStats();
  ASSERT_EQ(stats.size(), 1u);
  EXPECT_EQ(stats[0].h264LevelOffered, "3.1");
  EXPECT_EQ(stats[0].h264LevelSent, "") << "no keyframe published yet: the stream's level is not known";
  EXPECT_EQ(stats[0].levelCovered, -1);

  // A 1080p30 keyframe: its SPS says level 4.0 (profile 66, constraint_set1, level_idc 40).
  auto unit = std::make_shared<EncodedUnit>();
  unit->width = 1920;
  unit->height = 1080;
  unit->keyframe = true;
  unit->bytes = {0, 0, 0, 1, 0x67, 0x42, 0xc0, 0x28, 0xda, 0x01, 0xe0, 0x08, 0x9f, 0x96};
  server.unnamedStream()->deliver(unit);
  r = cli.Post("/whep", test::chromiumOffer(), "application/sdp");
  ASSERT_TRUE(r && r->status == 201);
  stats = server.viewerStats();
  ASSERT_EQ(stats.size(), 2u);
  EXPECT_EQ(stats[1].h264LevelOffered, "3.1");
  EXPECT_EQ(stats[1].h264LevelSent, "4.0");
  EXPECT_EQ(stats[1].levelCovered, 0);
}

TEST(WhepServer, EndpointAnswersEachMethodAsTheRfcSays) {
  StreamServer server(loopbackConfig());
  auto cli = clientFor(server);
  auto get = cli.Get("/whep");
  ASSERT_TRUE(get);
  EXPECT_EQ(get->status, 200);
  EXPECT_TRUE(get->body.empty()) << get->body;
  EXPECT_EQ(get->get_header_value("Accept-Post"), "application/sdp");
  auto head = cli.Head("/whep");
  ASSERT_TRUE(head);
  EXPECT_EQ(head->status, 200);
  EXPECT_EQ(head->get_header_value("Allow"), "GET, HEAD, POST, OPTIONS");

  for (const char* method : {"DELETE", "PATCH"}) {
    auto r = std::string(method) == "DELETE" ? cli.Delete("/whep") : cli.Patch("/whep", "x", "text/plain");
    ASSERT_TRUE(r) << method;
    EXPECT_EQ(r->status, 405) << method;
    EXPECT_EQ(r->get_header_value("Allow"), "GET, HEAD, POST, OPTIONS") << method;
    EXPECT_NE(r->body.find("POST an SDP offer"), std::string::npos) << r->body;
    EXPECT_EQ(r->get_header_value("Access-Control-Allow-Origin"), "*") << method;
  }

  auto options = cli.Options("/whep");
  ASSERT_TRUE(options);
  EXPECT_EQ(options->status, 200);
  EXPECT_EQ(options->get_header_value("Accept-Post"), "application/sdp");
  EXPECT_EQ(options->get_header_value("Allow"), "GET, HEAD, POST, OPTIONS");

  // A named stream's endpoint (/whep/NAME) answers the same; an unknown name is no session either.
  auto cam = server.addStream("cam1");
  auto camGet = cli.Get("/whep/cam1");
  ASSERT_TRUE(camGet);
  EXPECT_EQ(camGet->status, 200);
  EXPECT_EQ(camGet->get_header_value("Allow"), "GET, HEAD, POST, OPTIONS");
  auto camDelete = cli.Delete("/whep/cam1");
  ASSERT_TRUE(camDelete);
  EXPECT_EQ(camDelete->status, 405);
  auto camOptions = cli.Options("/whep/cam1");
  ASSERT_TRUE(camOptions);
  EXPECT_EQ(camOptions->get_header_value("Accept-Post"), "application/sdp");
  auto nothing = cli.Get("/whep/cam2");
  ASSERT_TRUE(nothing);
  EXPECT_EQ(nothing->status, 404);
  EXPECT_EQ(server.viewerCount(), 0u);
}

// Memory per session (docs/reliability.md, Soak): webrtcbin interns every SSRC it negotiates as GQuarks
// that are never freed, so viewers that come and go must not bring fresh media SSRCs (fails with an
// SSRC drawn per session: a 1-in-2^31 chance of passing by luck per pair; three pairs compared), and the
// RTX SSRC webrtcbin draws per answer must not become the names "ssrc-<rtx>-cname" / "ssrc-<rtx>-msid"
// (fails when the answer is set as the local description with its a=ssrc:<rtx> lines), while the
// answer the viewer gets still pairs RTX with the media SSRC and names it (a=ssrc-group:FID, a=ssrc).
TEST(WhepServer, ViewersReuseTheMediaSsrcSoNoNamesAreInternedPerViewer) {
  StreamServer server(loopbackConfig());
  auto cli = clientFor(server);
  const std::string offer = test::chromiumOffer();
  std::string first;
  for (int i = 0; i < 4; ++i) {
    auto r = cli.Post("/whep", offer, "application/sdp");
    ASSERT_TRUE(r) << httplib::to_string(r.error());
    ASSERT_EQ(r->status, 201) << r->body;
    std::smatch fid;
    ASSERT_TRUE(std::regex_search(r->body, fid, std::regex("a=ssrc-group:FID ([0-9]+) ([0-9]+)"))) << r->body;
    if (i == 0) first = fid[1].str();
    EXPECT_EQ(fid[1].str(), first) << "session " << i << " brought a new media SSRC";
    const std::string rtx = fid[2].str();
    EXPECT_NE(rtx, first) << r->body;
    EXPECT_NE(r->body.find("a=ssrc:" + first + " cname:"), std::string::npos) << r->body;
    // The viewer still gets the RTX SSRC's own lines (Chromium refuses a FID group without them).
    EXPECT_NE(r->body.find("a=ssrc:" + rtx + " cname:"), std::string::npos) << r->body;
    EXPECT_NE(r->body.find("a=ssrc:" + rtx + " msid:"), std::string::npos) << r->body;
    for (const char* attribute : {"cname", "msid"}) {
      const std::string name = "ssrc-" + rtx + "-" + attribute;
      EXPECT_EQ(g_quark_try_string(name.c_str()), 0u) << "session " << i << " interned " << name;
    }
    auto del = cli.Delete(r->get_header_value("Location"));
    ASSERT_TRUE(del);
    EXPECT_EQ(del->status, 200);
  }
}

TEST(WhepServer, BrokenOffersGetTheRight4xxWithAReason) {
  StreamServer server(loopbackConfig());
  auto cli = clientFor(server);
  const std::string offer = test::chromiumOffer();

  auto garbage = cli.Post("/whep", "this is not an SDP offer\r\n", "application/sdp");
  ASSERT_TRUE(garbage);
  EXPECT_EQ(garbage->status, 400);
  EXPECT_NE(garbage->body.find("malformed SDP offer"), std::string::npos) << garbage->body;

  auto empty = cli.Post("/whep", "", "application/sdp");
  ASSERT_TRUE(empty);
  EXPECT_EQ(empty->status, 400);

  auto vp8 = cli.Post("/whep", test::withoutLines(offer, R"(a=rtpmap:\d+ H264/90000)"), "application/sdp");
  ASSERT_TRUE(vp8);
  EXPECT_EQ(vp8->status, 422);  // well-formed but unusable; 406 would mean an SDP counter-offer in WHEP
  EXPECT_NE(vp8->body.find("H.264"), std::string::npos) << vp8->body;

  // A garbage DTLS fingerprint is refused at offer time (it would take 201 and fail the handshake later).
  auto fingerprint =
      cli.Post("/whep", test::withoutLines(offer, "a=fingerprint:.*") + "a=fingerprint:sha-256 00\r\n", "application/sdp");
  ASSERT_TRUE(fingerprint);
  EXPECT_EQ(fingerprint->status, 400);
  EXPECT_NE(fingerprint->body.find("a=fingerprint:sha-256 00 is not"), std::string::npos) << fingerprint->body;

  // A video m-line without a=mid is refused before webrtcbin sees it, saying so.
  auto noMid = cli.Post("/whep", test::withoutLines(offer, "a=mid:.*"), "application/sdp");
  ASSERT_TRUE(noMid);
  EXPECT_EQ(noMid->status, 400);
  EXPECT_NE(noMid->body.find("no a=mid"), std::string::npos) << noMid->body;

  auto json = cli.Post("/whep", offer, "application/json");
  ASSERT_TRUE(json);
  EXPECT_EQ(json->status, 415);
  EXPECT_NE(json->body.find("application/sdp"), std::string::npos);

  auto big = cli.Post("/whep", std::string(1 << 20, 'v'), "application/sdp");
  ASSERT_TRUE(big);
  EXPECT_EQ(big->status, 413);
  EXPECT_NE(big->body.find("65536"), std::string::npos) << big->body;

  auto unknown = cli.Delete("/whep/00000000000000000000000000000000");
  ASSERT_TRUE(unknown);
  EXPECT_EQ(unknown->status, 404);
  auto unknownPatch = cli.Patch("/whep/nope", "x", "application/trickle-ice-sdpfrag");
  ASSERT_TRUE(unknownPatch);
  EXPECT_EQ(unknownPatch->status, 404);

  // Every refusal above carries CORS so a page on another origin can read the reason.
  EXPECT_EQ(vp8->get_header_value("Access-Control-Allow-Origin"), "*");
  EXPECT_EQ(big->get_header_value("Access-Control-Allow-Origin"), "*");
  EXPECT_EQ(server.viewerCount(), 0u);

  // The server still negotiates after all that.
  auto ok = cli.Post("/whep", offer, "application/sdp");
  ASSERT_TRUE(ok);
  EXPECT_EQ(ok->status, 201) << ok->body;
}

TEST(WhepServer, BodyLimitIsConfigurable) {
  StreamConfig c = loopbackConfig();
  c.maxBodyBytes = 1024;
  StreamServer server(c);
  auto cli = clientFor(server);
  auto r = cli.Post("/whep", test::chromiumOffer(), "application/sdp");  // ~5 KB
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 413);
  EXPECT_NE(r->body.find("1024"), std::string::npos) << r->body;
}

// Sends one raw request and returns the status line of the first response.
std::string rawStatusLine(std::uint16_t port, const std::string& request) {
  const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return "socket failed";
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(port);
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  timeval tv{5, 0};
  ::setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
  std::string got;
  if (::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0 &&
      ::send(fd, request.data(), request.size(), MSG_NOSIGNAL) == static_cast<ssize_t>(request.size())) {
    char buf[512];
    while (got.find("\r\n") == std::string::npos) {
      const ssize_t n = ::recv(fd, buf, sizeof buf, 0);
      if (n <= 0) break;
      got.append(buf, static_cast<std::size_t>(n));
    }
  }
  ::close(fd);
  return got.substr(0, got.find("\r\n"));
}

TEST(WhepServer, UnsizedChunkedAndCompressedBodiesAreRefused) {
  StreamServer server(loopbackConfig());
  // httplib 0.11 would read these bodies without a bound: chunked, or no Content-Length at all.
  EXPECT_EQ(rawStatusLine(server.port(),
                          "POST /whep HTTP/1.1\r\nHost: x\r\nContent-Type: application/sdp\r\n"
                          "Transfer-Encoding: chunked\r\n\r\n5\r\nv=0\r\n\r\n0\r\n\r\n"),
            "HTTP/1.1 411 Length Required");
  EXPECT_EQ(rawStatusLine(server.port(),
                          "POST /whep HTTP/1.1\r\nHost: x\r\nContent-Type: application/sdp\r\n"
                          "Connection: close\r\n\r\nv=0\r\n"),
            "HTTP/1.1 411 Length Required");
  // The size limit applies before inflating, so compressed bodies are refused.
  auto cli = clientFor(server);
  httplib::Headers gz = {{"Content-Encoding", "gzip"}};
  auto compressed = cli.Post("/whep", gz, std::string("\x1f\x8b", 2), "application/sdp");
  ASSERT_TRUE(compressed);
  EXPECT_EQ(compressed->status, 415);
  EXPECT_NE(compressed->body.find("uncompressed"), std::string::npos);
}

TEST(WhepServer, CorsPreflightIsAnswered) {
  StreamServer server(loopbackConfig());
  auto cli = clientFor(server);
  httplib::Headers h = {{"Origin", "http://example.com"},
                        {"Access-Control-Request-Method", "POST"},
                        {"Access-Control-Request-Headers", "content-type,authorization"}};
  auto r = cli.Options("/whep", h);
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 200);
  EXPECT_EQ(r->get_header_value("Access-Control-Allow-Origin"), "*");
  EXPECT_NE(r->get_header_value("Access-Control-Allow-Methods").find("POST"), std::string::npos);
  const std::string allowHeaders = r->get_header_value("Access-Control-Allow-Headers");
  for (const char* name : {"Content-Type", "Authorization", "If-Match"}) {
    EXPECT_NE(allowHeaders.find(name), std::string::npos) << name;
  }
  EXPECT_NE(r->get_header_value("Access-Control-Expose-Headers").find("Location"), std::string::npos);
  auto session = cli.Options("/whep/abc", h);
  ASSERT_TRUE(session);
  EXPECT_EQ(session->status, 200);
  EXPECT_NE(session->get_header_value("Access-Control-Allow-Methods").find("DELETE"), std::string::npos);
  // Allow lists only what the session accepts: not POST, nor PATCH (501), as it once did.
  EXPECT_EQ(session->get_header_value("Allow"), "GET, HEAD, DELETE, OPTIONS");
}

TEST(WhepServer, TooManyViewersGet503UntilOneLeaves) {
  StreamConfig c = loopbackConfig();
  c.maxViewers = 1;
  StreamServer server(c);
  auto cli = clientFor(server);
  const std::string offer = test::chromiumOffer();
  auto first = cli.Post("/whep", offer, "application/sdp");
  ASSERT_TRUE(first);
  ASSERT_EQ(first->status, 201) << first->body;
  auto second = cli.Post("/whep", offer, "application/sdp");
  ASSERT_TRUE(second);
  EXPECT_EQ(second->status, 503);
  EXPECT_NE(second->body.find("too many viewers"), std::string::npos) << second->body;
  ASSERT_EQ(cli.Delete(first->get_header_value("Location"))->status, 200);
  auto third = cli.Post("/whep", offer, "application/sdp");
  ASSERT_TRUE(third);
  EXPECT_EQ(third->status, 201) << third->body;
}

TEST(WhepServer, SeveralViewersAtOnceAndShutdownWithSessionsOpen) {
  auto server = std::make_unique<StreamServer>(loopbackConfig());
  auto cli = clientFor(*server);
  const std::string offer = test::chromiumOffer();
  std::vector<std::string> locations;
  for (int i = 0; i < 3; ++i) {
    auto r = cli.Post("/whep", offer, "application/sdp");
    ASSERT_TRUE(r);
    ASSERT_EQ(r->status, 201) << r->body;
    locations.push_back(r->get_header_value("Location"));
  }
  EXPECT_EQ(server->viewerCount(), 3u);
  EXPECT_NE(locations[0], locations[1]);
  EXPECT_NE(locations[1], locations[2]);
  // Shutdown with the three sessions open: the destructor ends every session and joins its threads in
  // bounded time (on its own thread, so a hang fails here instead of at CTest's timeout), and then
  // nothing listens on the port any more.
  const int port = server->port();
  auto done = std::async(std::launch::async, [&] { server.reset(); });
  ASSERT_EQ(done.wait_for(std::chrono::seconds(15)), std::future_status::ready)
      << "the server did not shut down within 15 s with sessions open";
  done.get();
  const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  ASSERT_GE(fd, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_port = htons(static_cast<std::uint16_t>(port));
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  EXPECT_NE(::connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof a), 0) << "the port still accepts after shutdown";
  ::close(fd);
}

TEST(WhepServer, PortInUseThrowsUnavailableWithTheFix) {
  StreamServer first(loopbackConfig());
  StreamConfig c = loopbackConfig();
  c.port = first.port();
  try {
    StreamServer second(c);
    FAIL() << "bound a port already in use";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), Errc::kUnavailable);
    const std::string what = e.what();
    EXPECT_NE(what.find("127.0.0.1:" + std::to_string(first.port()) + " is already in use"),
              std::string::npos)
        << what;
    // The library's own terms: what to change (the port), never a CLI flag; the CLI adds its flag
    // for the setting the error names.
    EXPECT_NE(what.find("another port"), std::string::npos) << what;
    EXPECT_EQ(what.find("--"), std::string::npos) << "a library message names a CLI flag: " << what;
    const auto* about = dynamic_cast<const SettingError*>(&e);
    ASSERT_NE(about, nullptr) << "a port in use is about the listen setting";
    EXPECT_EQ(about->setting(), setting::kListen);
  }
}

TEST(WhepServer, BadConfigIsRefused) {
  StreamConfig c = loopbackConfig();
  c.webRoot = "/nonexistent/zerohop-web";
  try {
    StreamServer s(c);
    FAIL() << "accepted a missing web root";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), Errc::kNotFound);
  }
  StreamConfig noViewers = loopbackConfig();
  noViewers.maxViewers = 0;
  try {
    StreamServer s(noViewers);
    FAIL() << "accepted maxViewers = 0";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), Errc::kInvalidArgument);
  }
  StreamConfig inverted = loopbackConfig();
  inverted.playoutDelayMinMs = 300;  // above the maximum
  inverted.playoutDelayMaxMs = 200;
  try {
    StreamServer s(inverted);
    FAIL() << "accepted a playout delay of 300,200";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), Errc::kInvalidArgument);
    EXPECT_NE(std::string(e.what()).find("playout delay 300,200"), std::string::npos) << e.what();
    EXPECT_EQ(std::string(e.what()).find("--"), std::string::npos) << "a CLI flag in a library message: " << e.what();
    const auto* about = dynamic_cast<const SettingError*>(&e);
    ASSERT_NE(about, nullptr) << "a bad playout delay is about that setting";
    EXPECT_EQ(about->setting(), setting::kPlayoutDelay);
  }
  StreamConfig none = loopbackConfig();
  none.host = "192.0.2.123";  // TEST-NET-1: not an address of this machine
  try {
    StreamServer s(none);
    FAIL() << "bound an address this machine does not have";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), Errc::kUnavailable);
    EXPECT_NE(std::string(e.what()).find("bind("), std::string::npos) << e.what();
  }
}

TEST(WhepServer, ServesThePageAndStats) {
  StreamServer server(loopbackConfig());
  auto cli = clientFor(server);
  auto index = cli.Get("/");
  ASSERT_TRUE(index);
  EXPECT_EQ(index->status, 200);
  EXPECT_EQ(index->get_header_value("Content-Type"), "text/html; charset=utf-8");
  EXPECT_NE(index->body.find("<"), std::string::npos);
  auto missing = cli.Get("/no-such-file.js");
  ASSERT_TRUE(missing);
  EXPECT_EQ(missing->status, 404);
  auto traversal = cli.Get("/../CMakeLists.txt");
  ASSERT_TRUE(traversal);
  EXPECT_EQ(traversal->status, 404);

  auto stats = cli.Get("/stats");
  ASSERT_TRUE(stats);
  EXPECT_EQ(stats->status, 200);
  EXPECT_EQ(stats->get_header_value("Content-Type"), "application/json");
  EXPECT_NE(stats->body.find("\"viewers\": 0"), std::string::npos) << stats->body;
  server.setStatsProvider(
      [&server] { return "{\"fps\": 30, \"viewers\": " + std::to_string(server.viewerCount()) + "}"; });
  auto provided = cli.Get("/stats");
  ASSERT_TRUE(provided);
  EXPECT_EQ(provided->body, "{\"fps\": 30, \"viewers\": 0}");
}

// Congestion control's target: none until the pipeline sets the maximum, then the maximum (no viewer
// holds it down), within [min, max]; off: none at all, whatever the maximum.
TEST(WhepServer, BitrateTargetStartsAtTheMaximumAndIsAbsentWhenOff) {
  StreamConfig config = loopbackConfig();
  config.minBitrateKbps = 400;
  StreamServer server(config);
  auto unnamed = server.unnamedStream();
  EXPECT_EQ(unnamed->targetBitrateKbps(), 0u);
  unnamed->setMaxBitrate(1800);
  EXPECT_EQ(unnamed->targetBitrateKbps(), 1800u);
  const StreamBitrate b = unnamed->bitrate();
  EXPECT_TRUE(b.congestionControl);
  EXPECT_EQ(b.minKbps, 400u);
  EXPECT_EQ(b.maxKbps, 1800u);
  // The VP8 encode has its own target within the same limits, at the maximum too until VP8 viewers count.
  EXPECT_EQ(unnamed->targetBitrateKbps(Codec::kVP8), 1800u);
  EXPECT_EQ(unnamed->bitrate(Codec::kVP8).minKbps, 400u);
  auto named = server.addStream("cam1");
  named->setMaxBitrate(300);  // under the minimum: the minimum is the maximum
  EXPECT_EQ(named->targetBitrateKbps(), 300u);
  EXPECT_EQ(named->bitrate().minKbps, 300u);
  EXPECT_EQ(named->targetBitrateKbps(Codec::kVP8), 300u);

  config.congestionControl = false;
  StreamServer off(config);
  off.unnamedStream()->setMaxBitrate(1800);
  EXPECT_EQ(off.unnamedStream()->targetBitrateKbps(), 0u);
  EXPECT_FALSE(off.unnamedStream()->bitrate().congestionControl);
}

}  // namespace
}  // namespace zerohop

namespace zerohop {
namespace {

TEST(WhepServer, BearerTokenGuardsSessionsButNotThePage) {
  StreamConfig c = loopbackConfig();
  c.whepToken = "s3cret-token";
  StreamServer server(c);
  auto cli = clientFor(server);
  const std::string offer = test::chromiumOffer();

  auto none = cli.Post("/whep", offer, "application/sdp");
  ASSERT_TRUE(none);
  EXPECT_EQ(none->status, 401);
  EXPECT_NE(none->get_header_value("WWW-Authenticate").find("Bearer"), std::string::npos);
  EXPECT_NE(none->body.find("Authorization: Bearer"), std::string::npos) << none->body;
  EXPECT_EQ(none->body.find("--"), std::string::npos) << "a CLI flag told to a WHEP client: " << none->body;

  for (const char* wrong : {"Bearer s3cret-tokeN", "Bearer s3cret-token2", "Bearer ", "Basic s3cret-token",
                            "s3cret-token"}) {
    auto r = cli.Post("/whep", httplib::Headers{{"Authorization", wrong}}, offer, "application/sdp");
    ASSERT_TRUE(r);
    EXPECT_EQ(r->status, 401) << wrong;
  }
  EXPECT_EQ(server.viewerCount(), 0u);

  const httplib::Headers auth{{"Authorization", "Bearer s3cret-token"}};
  auto ok = cli.Post("/whep", auth, offer, "application/sdp");
  ASSERT_TRUE(ok);
  ASSERT_EQ(ok->status, 201) << ok->body;
  const std::string location = ok->get_header_value("Location");
  auto unauthorizedDelete = cli.Delete(location);
  ASSERT_TRUE(unauthorizedDelete);
  EXPECT_EQ(unauthorizedDelete->status, 401);
  EXPECT_EQ(server.viewerCount(), 1u) << "a DELETE without the token must not end the session";
  auto del = cli.Delete(location, auth);
  ASSERT_TRUE(del);
  EXPECT_EQ(del->status, 200);
  EXPECT_EQ(server.viewerCount(), 0u);

  auto page = cli.Get("/");
  ASSERT_TRUE(page);
  EXPECT_EQ(page->status, 200) << "the token guards WHEP, not the page";
}

TEST(WhepServer, MetricsComeFromTheProviderOr404) {
  StreamServer server(loopbackConfig());
  auto cli = clientFor(server);
  auto missing = cli.Get("/metrics");
  ASSERT_TRUE(missing);
  EXPECT_EQ(missing->status, 404);
  server.setMetricsProvider([] { return std::string("zerohop_viewers 0\n"); });
  auto r = cli.Get("/metrics");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 200);
  EXPECT_EQ(r->body, "zerohop_viewers 0\n");
  EXPECT_NE(r->get_header_value("Content-Type").find("version=0.0.4"), std::string::npos);
}

}  // namespace
}  // namespace zerohop
