// The first viewer after start is answered as fast as later ones, because the server
// warmed what the first session loads (plugins, the DTLS certificate) at start. Each test needs a fresh
// process (ctest runs each in its own): what is warm stays warm for the life of the process.

#include <gtest/gtest.h>
#include <httplib.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <string>
#include <vector>

#include "stream/webrtc_warmup.hpp"
#include "test_sdp.hpp"
#include "test_server.hpp"
#include "zerohop/stream_server.hpp"

namespace zerohop {
namespace {

constexpr int kViewers = 5;

// POST -> 201 of kViewers offers one after the other (each ended before the next), in ms.
std::vector<double> answerTimesMs(const StreamServer& server) {
  auto cli = test::clientFor(server);
  const std::string offer = test::chromiumOffer();
  std::vector<double> ms;
  for (int i = 0; i < kViewers; ++i) {
    const auto start = std::chrono::steady_clock::now();
    auto r = cli.Post("/whep", offer, "application/sdp");
    const double took =
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
    if (!r || r->status != 201) {
      ADD_FAILURE() << "POST " << i + 1 << ": "
                    << (r ? std::to_string(r->status) + " " + r->body : "no answer");
      return ms;
    }
    ms.push_back(took);
    auto del = cli.Delete(r->get_header_value("Location"));
    EXPECT_TRUE(del && del->status == 200);
  }
  std::printf("POST /whep -> 201, viewers 1..%d one after the other (ms):", kViewers);
  for (double t : ms) std::printf(" %.1f", t);
  std::printf("\n");
  return ms;
}

StreamConfig loopback(bool warmUp) {
  StreamConfig c = test::loopbackConfig();
  c.warmUp = warmUp;
  return c;
}

// Fails when the first viewer pays for the warm-up: without it the first answer takes 0.2-0.6 s
// against 5-7 ms for the later ones here (the test below). The bound is generous for a loaded 2-core box,
// 3x the slowest of the later four plus 100 ms (300 ms under a sanitizer), and still fails for every cold
// run seen. (Against the fifth alone it failed once under ASan at nice 19 beside the browser tests: 561 ms
// against a fifth of 147 ms, every answer slow there.)
TEST(WhepFirstViewer, IsAnsweredAsFastAsTheFifth) {
  if (stream::webrtcWarm()) GTEST_SKIP() << "this process is warm already: run this test alone (ctest does)";
  const auto start = std::chrono::steady_clock::now();
  StreamServer server(loopback(true));
  const auto started = std::chrono::steady_clock::now();
  stream::warmUpWebrtcOnce();  // the server's own warm-up is running: this waits for it to finish
  const auto ms = [](auto a, auto b) { return std::chrono::duration<double, std::milli>(b - a).count(); };
  std::printf("server started in %.1f ms; its warm-up was done %.0f ms later\n", ms(start, started),
              ms(started, std::chrono::steady_clock::now()));
  const std::vector<double> answers = answerTimesMs(server);
  ASSERT_EQ(answers.size(), static_cast<std::size_t>(kViewers));
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
  constexpr double kRoomMs = 300;
#else
  constexpr double kRoomMs = 100;
#endif
  const double slowestLater = *std::max_element(answers.begin() + 1, answers.end());
  EXPECT_LE(answers.front(), 3 * slowestLater + kRoomMs)
      << "the first viewer waited " << answers.front() << " ms, the slowest later one " << slowestLater
      << " ms";
}

// The same without the warm-up: what the first viewer used to wait (the "before" figure of
// docs/benchmarks-latency.md). It shows the measure above can tell the two apart: the first is the slowest.
TEST(WhepFirstViewer, WithoutWarmUpWaitsLongerThanTheFifth) {
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
  // Instrumented, the cold first negotiation (DTLS certificate, plugin loading) has taken over the server's
  // 3 s negotiation bound on two busy cores (503 in CI under ASan and TSan): this measures timing, which the
  // default build checks; the warm-up test above still runs here.
  GTEST_SKIP() << "a cold-start timing comparison; run in the default build";
#endif
  if (stream::webrtcWarm()) GTEST_SKIP() << "this process is warm already: run this test alone (ctest does)";
  StreamServer server(loopback(false));
  const std::vector<double> ms = answerTimesMs(server);
  ASSERT_EQ(ms.size(), static_cast<std::size_t>(kViewers));
  EXPECT_GT(ms.front(), ms.back()) << "without the warm-up the first viewer should pay for it";
  EXPECT_FALSE(stream::webrtcWarm()) << "warmUp = false started a warm-up";
}

}  // namespace
}  // namespace zerohop
