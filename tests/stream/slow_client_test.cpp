// Slow, half-open and never-reading HTTP clients (raw sockets) against DeadlineHttpServer and the
// StreamServer built on it: they are cut off at their deadline and never hold up other clients.

#include <gtest/gtest.h>
#include <httplib.h>

#include <atomic>
#include <chrono>
#include <string>
#include <thread>
#include <vector>

#include "raw_client.hpp"
#include "served_http.hpp"
#include "stream/deadline_http_server.hpp"
#include "zerohop/stream_server.hpp"

namespace zerohop {
namespace {

using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;
using test::RawClient;
using test::Served;

TEST(SlowHttpClient, HalfSentRequestsAreCutAtTheDeadlineAndDoNotBlockOthers) {
  // A request deadline long enough that a normal request under a sanitizer on 2 busy cores is served
  // well inside it (the check below is that it was served before the half-open clients were cut).
  constexpr auto kRequest = 2500ms;
  stream::HttpServerLimits limits = Served::limits();
  limits.requestDeadline = kRequest;
  Served s(limits);
  std::vector<std::unique_ptr<RawClient>> halfOpen;
  for (std::size_t i = 0; i + 1 < Served::kWorkers; ++i) {  // every worker but one busy with a half request
    halfOpen.push_back(std::make_unique<RawClient>(s.port()));
    ASSERT_TRUE(halfOpen.back()->connected());
    ASSERT_TRUE(halfOpen.back()->send("GET /small HTTP/1.1\r\nHost: x\r\n"));  // no blank line: never ends
  }
  const auto t0 = Clock::now();
  // The server holds every half-open connection (a condition, not a guess of how long accepting takes).
  while (s.server().openConnections() < halfOpen.size() && Clock::now() - t0 < 5s) std::this_thread::sleep_for(5ms);
  ASSERT_EQ(s.server().openConnections(), halfOpen.size()) << "the half-open clients were not all accepted";
  const auto took = s.timedGet();
  EXPECT_GE(took.count(), 0.0) << "a normal request failed while half-open clients were connected";
  // Served before any half-open client was cut: had it waited behind them, they would be closed by now
  // (the request deadline frees their workers first). Timing-free, so it holds under sanitizers too.
  for (auto& c : halfOpen) EXPECT_TRUE(c->stillOpen()) << "a normal request waited until a half-open client was cut";
  for (auto& c : halfOpen) {
    EXPECT_TRUE(c->closedByServerBefore(t0 + kRequest + 1500ms))
        << "a half-open client kept its connection past the request deadline";
  }
  // Their workers are free again: as many normal requests as workers succeed at once.
  std::vector<std::thread> gets;
  std::atomic<int> ok{0};
  for (std::size_t i = 0; i < Served::kWorkers; ++i)
    gets.emplace_back([&] { ok += s.timedGet().count() >= 0 ? 1 : 0; });
  for (auto& t : gets) t.join();
  EXPECT_EQ(ok.load(), int(Served::kWorkers));
}

TEST(SlowHttpClient, TrickledRequestIsCutAtTheDeadline) {
  Served s;
  RawClient c(s.port());
  ASSERT_TRUE(c.connected());
  const auto t0 = Clock::now();
  std::atomic<bool> stop{false};
  std::thread trickle([&] {  // a slow-loris: one header byte every 100 ms, never finishing
    std::string header = "GET /small HTTP/1.1\r\nX-Slow: ";
    for (char ch : header) {
      if (stop || !c.send(std::string(1, ch))) return;
      std::this_thread::sleep_for(100ms);
    }
    while (!stop && c.send("a")) std::this_thread::sleep_for(100ms);
  });
  const bool closed = c.closedByServerBefore(t0 + Served::kRequest * 5);
  const auto held = Clock::now() - t0;
  stop = true;
  trickle.join();
  EXPECT_TRUE(closed) << "a client trickling a request byte by byte was never cut off";
  EXPECT_LT(held, Served::kRequest + 1500ms);
  EXPECT_GT(held, Served::kRequest - 100ms) << "cut off before its deadline";
}

TEST(SlowHttpClient, ClientThatNeverReadsIsCutAtTheResponseDeadline) {
  Served s;
  RawClient c(s.port(), 4096);
  ASSERT_TRUE(c.connected());
  ASSERT_TRUE(c.send("GET /big HTTP/1.1\r\nHost: x\r\n\r\n"));
  const auto t0 = Clock::now();
  std::this_thread::sleep_for(Served::kResponse + 1000ms);  // not reading at all
  // The server gave up writing: draining what was buffered ends with the connection closed, well
  // before 8 MB arrived (a read of all of it would also end, but only after the whole body).
  EXPECT_TRUE(c.closedByServerBefore(Clock::now() + 2s))
      << "the server still writes to a client that never reads";
  EXPECT_LT(Clock::now() - t0, Served::kResponse + 3500ms);
  EXPECT_GE(s.timedGet().count(), 0.0);
}

TEST(SlowHttpClient, StopDoesNotWaitForSlowClients) {
  auto s = std::make_unique<Served>();
  RawClient c(s->port());
  ASSERT_TRUE(c.connected());
  ASSERT_TRUE(c.send("GET /small HTTP/1.1\r\n"));
  std::this_thread::sleep_for(100ms);
  const auto t0 = Clock::now();
  s.reset();
  EXPECT_LT(Clock::now() - t0, 500ms) << "stopping the server waited for a half-open client";
}

TEST(SlowHttpClient, StreamServerAnswersWhileHalfOpenClientsHang) {
  StreamConfig config;
  config.port = 0;
  StreamServer server(config);
  std::vector<std::unique_ptr<RawClient>> halfOpen;
  for (int i = 0; i < 8; ++i) {  // as many as cpp-httplib's default pool on a small machine
    halfOpen.push_back(std::make_unique<RawClient>(server.port()));
    ASSERT_TRUE(halfOpen.back()->send(
        "POST /whep HTTP/1.1\r\nContent-Type: application/sdp\r\nContent-Length: 900\r\n\r\nv=0"));
  }
  std::this_thread::sleep_for(100ms);
  httplib::Client cli("127.0.0.1", server.port());
  cli.set_read_timeout(10, 0);
  const auto t0 = Clock::now();
  auto r = cli.Get("/stats");
  ASSERT_TRUE(r) << httplib::to_string(r.error());
  EXPECT_EQ(r->status, 200);
  EXPECT_LT(Clock::now() - t0, 1s) << "GET /stats waited behind half-open clients";
  for (auto& c : halfOpen) {
    EXPECT_TRUE(c->closedByServerBefore(t0 + 7s)) << "a half-sent body held its connection past the deadline";
  }
}

}  // namespace
}  // namespace zerohop
