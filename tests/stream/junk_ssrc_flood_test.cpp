// A hostile viewer (issue 33): once connected, it sends SRTP-looking junk with a fresh random SSRC per
// packet from its own validated transport, 5,000 packets a second. Unchecked, each new SSRC made serve's
// SRTP decoder add a libsrtp stream (83 -> 322 MB in 10 s, never given back). Now serve drops them before
// decryption (src/stream/ssrc_gate.hpp), counts them in /stats, stays flat, and the viewer plays on.
// Prints one row of docs/reliability.md's table. ZEROHOP_JUNK_FLOOD_S sets the flood's length (default 6 s,
// 2 s under a sanitizer; the table's row was measured with 30).

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <thread>

#include "exposure_attacks.hpp"
#include "hostile_viewer.hpp"
#include "loopback_harness.hpp"
#include "zerohop/stream_server.hpp"

namespace zerohop {
namespace {

using namespace std::chrono_literals;
using namespace loopback;

// Sends junkRtpPacket()s (a new random SSRC each) through `pad` at `perSecond` for `length`, paced in
// 10 ms bursts; returns how many went.
long sendJunk(GstPad* pad, int perSecond, std::chrono::milliseconds length) {
  std::mt19937 random(std::random_device{}());
  const int perBurst = perSecond / 100;
  const auto start = test::Clock::now();
  long sent = 0;
  for (auto next = start; next < start + length; next += 10ms) {
    std::this_thread::sleep_until(next);  // pacing the flood, not waiting for a result
    for (int i = 0; i < perBurst; ++i) {
      const auto p = test::junkRtpPacket(static_cast<std::uint16_t>(sent), random);
      GstBuffer* buffer = gst_buffer_new_memdup(p.data(), p.size());
      if (gst_pad_chain(pad, buffer) != GST_FLOW_OK) return sent;
      ++sent;
    }
  }
  return sent;
}

std::chrono::milliseconds floodLength() {
  const char* s = std::getenv("ZEROHOP_JUNK_FLOOD_S");
  const int seconds = s ? std::atoi(s) : 0;
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
  constexpr int kDefault = 2;  // ASan's full unwinding sends them at ~1,600/s: 10,000 packets take ~6 s
#else
  constexpr int kDefault = 6;
#endif
  return std::chrono::seconds(seconds > 0 ? seconds : kDefault);
}

std::uint64_t inboundDropped(const StreamServer& server) {
  const std::vector<ViewerStats> viewers = server.viewerStats();
  return viewers.empty() ? 0 : viewers[0].inboundDropped;
}

// Without a sanitizer the gate counts every packet (30,000 of 30,000) and the viewer keeps 28-30 fps. An
// instrumented build on 2 busy cores reads the socket slower (the kernel drops what overflows it) and
// plays slower; the bounds there still tell a working gate (0 dropped without it) and a playing viewer.
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
constexpr std::uint64_t kShareCounted = 4;  // at least a quarter of the junk counted
constexpr int kMinFps = 5;
#else
constexpr std::uint64_t kShareCounted = 2;
constexpr int kMinFps = 10;
#endif

TEST_F(LoopbackReceive, JunkWithFreshSsrcsIsDroppedUnreadAndCountedWhileTheViewerPlaysOn) {
  const auto warm = test::Clock::now() + 15s;
  publisher_->publishWhile([&] { return viewer_->receivedUnits < 10 && test::Clock::now() < warm; });
  ASSERT_GE(viewer_->receivedUnits.load(), 10) << "the viewer never started receiving";
  GstPad* pad = test::niceSinkPad(viewer_->webrtcbin());
  ASSERT_NE(pad, nullptr) << "no nicesink in the viewer's webrtcbin (GStreamer's layout changed?)";
  const std::uint64_t droppedBefore = inboundDropped(*server_);
  const long rssBefore = test::rssKiB();
  const int framesBefore = viewer_->receivedUnits.load();
  const std::chrono::milliseconds length = floodLength();
  std::atomic<bool> done{false};
  long sent = 0;
  const auto started = test::Clock::now();
  std::thread attacker([&] {
    sent = sendJunk(pad, 5000, length);
    done = true;
  });
  publisher_->publishWhile([&] { return !done.load(); });
  attacker.join();
  const double seconds = std::chrono::duration<double>(test::Clock::now() - started).count();
  const int frames = viewer_->receivedUnits.load() - framesBefore;
  gst_object_unref(pad);
  // Every packet that reached serve's socket is dropped at the gate; the last ones may still be on
  // their way (bounded wait). Some may be lost in the kernel when the receiving thread falls behind.
  // (A session that ended shows no count: 0.)
  auto droppedSince = [&] {
    const std::uint64_t now = inboundDropped(*server_);
    return now >= droppedBefore ? now - droppedBefore : 0;
  };
  const auto settle = test::Clock::now() + 5s;
  while (droppedSince() < static_cast<std::uint64_t>(sent) * 9 / 10 && test::Clock::now() < settle)
    publisher_->publishWhile([&, n = 0]() mutable { return n++ < 3; });
  const std::uint64_t dropped = droppedSince();
  const long rssAfter = test::rssKiB();
  EXPECT_EQ(server_->viewerCount(), 1u) << "the viewer's session ended under the flood";
  // The viewer leaves (DELETE): what its session held goes with it.
  httplib::Client cli("127.0.0.1", server_->port());
  cli.set_read_timeout(10, 0);
  const auto deleted = cli.Delete(viewer_->location);
  ASSERT_TRUE(deleted) << httplib::to_string(deleted.error());
  EXPECT_EQ(deleted->status, 200);
  const auto gone = test::Clock::now() + 10s;
  while (server_->viewerCount() > 0 && test::Clock::now() < gone)
    publisher_->publishWhile([&, n = 0]() mutable { return n++ < 3; });
  EXPECT_EQ(server_->viewerCount(), 0u);
  const long rssLeft = test::rssKiB();
  std::printf(
      "junk flood | %ld packets (%.0f/s, fresh SSRC each) | dropped %llu | viewer %d frames in %.1f s "
      "(%.1f fps) | RSS %ld -> %ld KiB (%+ld), %ld KiB once it left\n",
      sent, sent / seconds, static_cast<unsigned long long>(dropped), frames, seconds, frames / seconds,
      rssBefore, rssAfter, rssAfter - rssBefore, rssLeft);

  EXPECT_GE(sent, 5000L * length.count() / 1000 * 9 / 10) << "the viewer's transport refused the junk";
  EXPECT_GE(dropped, static_cast<std::uint64_t>(sent) / kShareCounted)
      << "too little of the junk was counted at serve's gate";
  EXPECT_LE(dropped, static_cast<std::uint64_t>(sent)) << "the gate dropped more than the junk: honest RTCP";
  EXPECT_GE(frames, static_cast<int>(seconds * kMinFps))
      << "the viewer fell under " << kMinFps << " fps during the flood";
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
  std::printf("RSS bound not checked under a sanitizer\n");
#else
  // Unchecked, 30,000 fresh SSRCs took ~80 MB (a libsrtp stream each).
  EXPECT_LE(rssAfter - rssBefore, 12 * 1024) << "serve's memory grew with the junk";
  EXPECT_LE(rssLeft - rssBefore, 12 * 1024) << "serve kept memory after the junk's viewer left";
#endif
}

}  // namespace
}  // namespace zerohop
