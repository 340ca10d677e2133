// HTTPS on DeadlineHttpServer's own sockets (serve --tls-cert/--tls-key): a verifying client gets the
// page, /stats and a WHEP answer; clients that never finish the handshake, trickle it, or speak
// plain HTTP to the TLS port are closed (at the deadline) while others are served.
#include <gtest/gtest.h>
#include <httplib.h>
#include <stdlib.h>

#include <atomic>
#include <chrono>
#include <filesystem>
#include <memory>
#include <string>
#include <thread>

#include "raw_client.hpp"
#include "self_signed_cert.hpp"
#include "served_http.hpp"
#include "stream/deadline_http_server.hpp"
#include "stream/tls_context.hpp"
#include "test_sdp.hpp"
#include "test_server.hpp"
#include "zerohop/error.hpp"
#include "zerohop/setting_error.hpp"
#include "zerohop/stream_server.hpp"

namespace zerohop {
namespace {

using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;
using test::RawClient;

// A temporary directory with a self-signed certificate for 127.0.0.1 and its key.
class CertDir {
 public:
  CertDir() {
    std::string pattern = (std::filesystem::temp_directory_path() / "zerohop-https-XXXXXX").string();
    if (!::mkdtemp(pattern.data())) throw std::runtime_error("mkdtemp failed");
    dir_ = pattern;
    files_ = test::writeSelfSignedCert(dir_, "server");
  }
  ~CertDir() { std::filesystem::remove_all(dir_); }
  const test::CertFiles& files() const { return files_; }

 private:
  std::string dir_;
  test::CertFiles files_;
};

// A client that trusts only the test's certificate and checks the host name (127.0.0.1) against it.
httplib::Client verifyingClient(int port, const CertDir& certs) {
  httplib::Client cli("https://127.0.0.1:" + std::to_string(port));
  cli.set_ca_cert_path(certs.files().cert.c_str());
  cli.enable_server_certificate_verification(true);
  cli.set_read_timeout(10, 0);
  return cli;
}

TEST(Https, VerifiedClientGetsThePageStatsAndAWhepAnswer) {
  CertDir certs;
  StreamConfig c = test::loopbackConfig();
  c.tlsCertFile = certs.files().cert;
  c.tlsKeyFile = certs.files().key;
  StreamServer server(c);
  EXPECT_EQ(server.url().rfind("https://127.0.0.1:", 0), 0u) << server.url();
  auto cli = verifyingClient(server.port(), certs);

  auto page = cli.Get("/");
  ASSERT_TRUE(page) << httplib::to_string(page.error());
  EXPECT_EQ(page->status, 200);
  EXPECT_EQ(page->get_header_value("Content-Type"), "text/html; charset=utf-8");
  auto stats = cli.Get("/stats");
  ASSERT_TRUE(stats) << httplib::to_string(stats.error());
  EXPECT_EQ(stats->status, 200);
  EXPECT_NE(stats->body.find("\"viewers\": 0"), std::string::npos) << stats->body;

  auto answer = cli.Post("/whep", test::chromiumOffer(), "application/sdp");
  ASSERT_TRUE(answer) << httplib::to_string(answer.error());
  ASSERT_EQ(answer->status, 201) << answer->body;
  EXPECT_EQ(answer->get_header_value("Content-Type"), "application/sdp");
  EXPECT_NE(answer->body.find("a=sendonly"), std::string::npos) << answer->body;
  EXPECT_NE(answer->body.find("a=candidate:"), std::string::npos) << answer->body;
  EXPECT_EQ(server.viewerCount(), 1u);

  // Plain HTTP to it is not served.
  httplib::Client plain("127.0.0.1", server.port());
  plain.set_read_timeout(5, 0);
  auto refused = plain.Get("/stats");
  ASSERT_TRUE(refused) << httplib::to_string(refused.error());
  EXPECT_EQ(refused->status, 400);
  EXPECT_NE(refused->body.find("https://"), std::string::npos) << refused->body;
}

TEST(Https, OnlyOneOfCertAndKeyIsRefused) {
  CertDir certs;
  StreamConfig c = test::loopbackConfig();
  c.tlsCertFile = certs.files().cert;
  try {
    StreamServer server(c);
    FAIL() << "a certificate without its key was accepted";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), Errc::kInvalidArgument);
    EXPECT_NE(std::string(e.what()).find("a TLS certificate without a TLS key"), std::string::npos) << e.what();
    const auto* about = dynamic_cast<const SettingError*>(&e);
    ASSERT_NE(about, nullptr) << "the missing key is the setting to give";
    EXPECT_EQ(about->setting(), setting::kTlsKey);
  }
}

// Served over HTTPS with a 2 s idle deadline and a 3 s request deadline (long enough that three HTTPS
// requests under TSan on 2 busy cores are served before the silent client's idle deadline).
class ServedTls : public test::Served {
 public:
  static constexpr auto kIdle = 2000ms;
  static constexpr auto kRequest = 3000ms;
  explicit ServedTls(const CertDir& certs)  // certs must outlive it (timedGet() reads its certificate)
      : Served(limits(), std::make_shared<const stream::TlsContext>(certs.files().cert, certs.files().key),
               certs.files().cert) {}

 private:
  static stream::HttpServerLimits limits() {
    stream::HttpServerLimits l = Served::limits();
    l.idleTimeout = kIdle;
    l.requestDeadline = kRequest;
    return l;
  }
};

TEST(Https, SilentAndTricklingHandshakesAreCutAtTheirDeadlinesWhileOthersAreServed) {
  CertDir certs;
  ServedTls s(certs);
  RawClient silent(s.port());  // TCP only, never a ClientHello
  RawClient trickle(s.port());
  ASSERT_TRUE(silent.connected() && trickle.connected());
  const auto t0 = Clock::now();
  std::atomic<bool> stop{false};
  std::thread slowHello([&] {  // a TLS handshake record header, then one byte of it every 100 ms
    if (!trickle.send(std::string("\x16\x03\x01\x02\x00", 5))) return;
    while (!stop && trickle.send(std::string(1, '\x01'))) std::this_thread::sleep_for(100ms);
  });
  // Both count as open connections (against the limits) while their handshakes are unfinished.
  while (s.server().openConnections() < 2 && Clock::now() - t0 < ServedTls::kIdle - 200ms) std::this_thread::sleep_for(10ms);
  EXPECT_EQ(s.server().openConnections(), 2u) << "an unfinished handshake is not counted as a connection";
  for (int i = 0; i < 3; ++i) {
    const auto took = s.timedGet();
    EXPECT_GE(took.count(), 0.0) << "an HTTPS request failed while a silent client was connected";
    // Served while the silent client still held its connection: a request queued behind it would have
    // waited for its idle deadline to cut it. Timing-free (a whole TLS handshake under TSan on 2 busy
    // cores took over 500 ms, the bound this had).
    EXPECT_TRUE(silent.stillOpen()) << "an HTTPS request waited behind a silent or trickling handshake ("
                                    << took.count() << " s)";
  }
  EXPECT_TRUE(silent.closedByServerBefore(t0 + ServedTls::kIdle + 1000ms))
      << "a client that never sent its ClientHello kept its connection past the idle deadline";
  EXPECT_GT(Clock::now() - t0, ServedTls::kIdle - 100ms) << "cut off before its deadline";
  const bool trickleClosed = trickle.closedByServerBefore(t0 + ServedTls::kRequest + 1000ms);
  const auto trickleHeld = Clock::now() - t0;
  stop = true;
  slowHello.join();
  EXPECT_TRUE(trickleClosed) << "a client trickling its handshake was never cut off";
  EXPECT_GT(trickleHeld, ServedTls::kRequest - 100ms) << "a trickling handshake was cut at the idle deadline";
  EXPECT_GE(s.server().counters().timedOut, 2u);
  EXPECT_EQ(s.server().openConnections(), 0u);
}

TEST(Https, PlainHttpAndGarbageToTheTlsPortAreClosedAndCounted) {
  CertDir certs;
  ServedTls s(certs);
  RawClient plain(s.port());
  ASSERT_TRUE(plain.connected());
  ASSERT_TRUE(plain.send("GET /small HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n"));
  EXPECT_TRUE(plain.closedByServerBefore(Clock::now() + 3s)) << "plain HTTP to the TLS port stayed open";
  EXPECT_EQ(plain.received().rfind("HTTP/1.1 400 ", 0), 0u) << plain.received();
  EXPECT_NE(plain.received().find("https://"), std::string::npos) << plain.received();

  RawClient garbage(s.port());
  ASSERT_TRUE(garbage.connected());
  ASSERT_TRUE(garbage.send(std::string(300, '\xff')));
  EXPECT_TRUE(garbage.closedByServerBefore(Clock::now() + 3s)) << "a broken handshake stayed open";

  EXPECT_GE(s.timedGet().count(), 0.0) << "the server stopped serving after bad handshakes";
  EXPECT_EQ(s.server().counters().tlsFailed, 2u);
  EXPECT_EQ(s.server().counters().timedOut, 0u) << "closed by the deadline, not at once";
}

}  // namespace
}  // namespace zerohop
