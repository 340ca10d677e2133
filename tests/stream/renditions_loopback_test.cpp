// Renditions end to end on loopback (docs/ARCHITECTURE.md, "Renditions"): two GStreamer viewers of one
// stream with a two-rung ladder (320x240 and 160x120, both published each frame as the pipeline's
// rungs would be). One viewer loses a third of its packets: its own estimate falls, it alone moves to
// the lower rung, at that rung's keyframe, on the same track (no renegotiation: no second POST), and its
// parsed picture size becomes 160; the other viewer's rung, size and bitrate stay as they were. And a
// move on a clean link costs the viewer no freeze (no gap over 200 ms between its units around it).
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "loopback_harness.hpp"
#include "zerohop/stream_server.hpp"

namespace zerohop {
namespace {

using namespace std::chrono_literals;
using namespace loopback;

// The units of one rung, marked with it (the pipeline marks what each rung's encoder makes).
std::vector<EncodedUnitPtr> rungUnits(int width, int height, std::uint8_t rung) {
  std::vector<EncodedUnitPtr> out;
  for (const EncodedUnitPtr& u : encodeTestUnits(90, PixelFormat::kH264, width, height)) {
    auto copy = std::make_shared<EncodedUnit>(*u);
    copy->rendition = rung;
    out.push_back(std::move(copy));
  }
  return out;
}

// Each rung at 30 fps, each jumping to its next keyframe when a keyframe was asked for (as the
// pipeline forces one on every running rung).
class LadderPublisher {
 public:
  LadderPublisher(StreamServer& server, std::vector<std::vector<EncodedUnitPtr>> rungs)
      : server_(server), rungs_(std::move(rungs)), next_(rungs_.size(), 0) {
    server_.setKeyframeRequestHandler([this] { idrWanted_ = true; });
  }
  // Once this returns the server never calls the handler again (it is replaced under the server's lock).
  ~LadderPublisher() { server_.setKeyframeRequestHandler({}); }
  template <typename More>
  void publishWhile(More more) {
    while (more()) {
      const bool idr = idrWanted_.exchange(false);
      for (std::size_t r = 0; r < rungs_.size(); ++r) {
        const auto& units = rungs_[r];
        if (idr) {
          do next_[r] = (next_[r] + 1) % units.size();
          while (!units[next_[r]]->keyframe);
        }
        server_.publish(units[next_[r]]);
        next_[r] = (next_[r] + 1) % units.size();
      }
      std::this_thread::sleep_for(33ms);
    }
  }

 private:
  StreamServer& server_;
  std::vector<std::vector<EncodedUnitPtr>> rungs_;
  std::vector<std::size_t> next_;
  std::atomic<bool> idrWanted_{false};
};

std::optional<ViewerStats> statsOf(const StreamServer& server, const LoopbackViewer& viewer) {
  const std::string id = viewer.location.substr(viewer.location.rfind('/') + 1).substr(0, 8);
  for (const ViewerStats& s : server.viewerStats()) {
    if (s.id == id) return s;
  }
  return std::nullopt;
}

TEST(RenditionsLoopback, ALossyViewerMovesAloneToTheLowerRungAtItsKeyframeWithoutRenegotiation) {
  if (const std::string missing = missingLoopbackElement(); !missing.empty())
    GTEST_SKIP() << "GStreamer element " << missing << " is not installed (scripts/install-deps.sh)";
  std::vector<std::vector<EncodedUnitPtr>> rungs{rungUnits(320, 240, 0), rungUnits(160, 120, 1)};
  ASSERT_EQ(rungs[0].size(), 90u);
  ASSERT_EQ(rungs[1].size(), 90u);
  StreamConfig config;
  config.port = 0;
  StreamServer server(config);
  server.setMaxBitrate(1000);
  server.setRenditions({{320, 240, 600, 1000}, {160, 120, 100, 600}});
  LadderPublisher publisher(server, std::move(rungs));
  LoopbackViewer clean(true), lossy(true);
  ASSERT_TRUE(connectOverWhep(clean, server));
  ASSERT_TRUE(connectOverWhep(lossy, server));

  const auto joined = std::chrono::steady_clock::now() + 15s;
  publisher.publishWhile([&] {
    return (clean.receivedUnits < 30 || lossy.receivedUnits < 30) && std::chrono::steady_clock::now() < joined;
  });
  ASSERT_GE(clean.receivedUnits.load(), 30);
  ASSERT_GE(lossy.receivedUnits.load(), 30);
  EXPECT_EQ(clean.width.load(), 320);
  EXPECT_EQ(lossy.width.load(), 320) << "both start on rung 0";
  EXPECT_FALSE(server.wantsRendition(1)) << "no viewer is on rung 1: it is not wanted (so not encoded)";

  ASSERT_TRUE(lossy.loseOneIn(3));
  const auto moved = std::chrono::steady_clock::now() + 30s;
  publisher.publishWhile([&] {
    const auto s = statsOf(server, lossy);
    return !(s && s->rung == 1 && lossy.width.load() == 160) && std::chrono::steady_clock::now() < moved;
  });
  const auto l = statsOf(server, lossy);
  ASSERT_TRUE(l);
  std::printf("lossy viewer: estimate %.0f kb/s, rung %d, switches %llu, width %d\n", l->estimateKbps, l->rung,
              static_cast<unsigned long long>(l->rungSwitches), lossy.width.load());
  EXPECT_EQ(l->rung, 1) << "the lossy viewer did not move to rung 1 within 30 s (its estimate: " << l->estimateKbps << ")";
  EXPECT_GE(l->rungSwitches, 1u);
  EXPECT_EQ(lossy.width.load(), 160) << "its track did not carry rung 1's pictures";
  EXPECT_LT(l->estimateKbps, 600);
  EXPECT_TRUE(server.wantsRendition(1));

  // A second more of the lossy viewer on rung 1: the clean one was never moved, and its own estimate
  // and rung 0's target are its own (not the lossy viewer's).
  const auto more = std::chrono::steady_clock::now() + 1s;
  publisher.publishWhile([&] { return std::chrono::steady_clock::now() < more; });
  const auto c = statsOf(server, clean);
  ASSERT_TRUE(c);
  std::printf("clean viewer: estimate %.0f kb/s, rung %d, switches %llu, rung 0 target %.0f kb/s\n", c->estimateKbps,
              c->rung, static_cast<unsigned long long>(c->rungSwitches), c->encodeTargetKbps);
  EXPECT_EQ(c->rung, 0);
  EXPECT_EQ(c->rungSwitches, 0u);
  EXPECT_EQ(clean.width.load(), 320);
  EXPECT_GE(c->estimateKbps, 600) << "the clean viewer's estimate fell with the lossy viewer's";
  EXPECT_GE(server.targetBitrateKbps(), 600u) << "rung 0's encode followed the lossy viewer";
  EXPECT_EQ(server.viewerCount(), 2u) << "a switch must not end or add a session (no renegotiation)";
  clean.close();
  lossy.close();
}

// A move between rungs costs no freeze: on a clean link, the viewer whose estimate (at most the 1000
// kb/s ceiling) is below rung 0's need (1200) moves to rung 1 at its first feedback; around that move
// (a second either side of its first 160-wide unit) no two units it received are more than 200 ms apart.
TEST(RenditionsLoopback, AMoveBetweenRungsOnACleanLinkCostsNoFreeze) {
  if (const std::string missing = missingLoopbackElement(); !missing.empty())
    GTEST_SKIP() << "GStreamer element " << missing << " is not installed (scripts/install-deps.sh)";
  StreamConfig config;
  config.port = 0;
  StreamServer server(config);
  server.setMaxBitrate(1000);
  server.setRenditions({{320, 240, 1200, 1500}, {160, 120, 100, 1000}});
  LadderPublisher publisher(server, {rungUnits(320, 240, 0), rungUnits(160, 120, 1)});
  LoopbackViewer viewer(true);
  ASSERT_TRUE(connectOverWhep(viewer, server));
  const auto bound = std::chrono::steady_clock::now() + 15s;
  publisher.publishWhile([&] {
    const auto s = statsOf(server, viewer);
    return !(s && s->rung == 1 && viewer.width.load() == 160) && std::chrono::steady_clock::now() < bound;
  });
  ASSERT_EQ(viewer.width.load(), 160) << "the viewer did not move to rung 1 within 15 s";
  const auto more = std::chrono::steady_clock::now() + 1500ms;  // a second after the move, and some
  publisher.publishWhile([&] { return std::chrono::steady_clock::now() < more; });
  const auto log = viewer.unitLog();
  const auto moved = std::find_if(log.begin(), log.end(), [](const auto& u) { return u.width == 160; });
  ASSERT_NE(moved, log.end());
  int freezes = 0;
  auto longest = std::chrono::milliseconds(0);
  for (auto it = std::next(log.begin()); it != log.end(); ++it) {
    if (it->at < moved->at - 1s || it->at > moved->at + 1s) continue;
    const auto gap = std::chrono::duration_cast<std::chrono::milliseconds>(it->at - std::prev(it)->at);
    longest = std::max(longest, gap);
    if (gap > 200ms) ++freezes;
  }
  const auto s = statsOf(server, viewer);
  ASSERT_TRUE(s);
  std::printf("move to rung 1: %d freezes (gaps > 200 ms) within 1 s of it, longest gap %lld ms, %llu switch(es)\n",
              freezes, static_cast<long long>(longest.count()), static_cast<unsigned long long>(s->rungSwitches));
  EXPECT_EQ(s->rungSwitches, 1u);
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
  // Instrumented code on a busy box stalls the loopback itself (331 ms measured under TSan, a gap of the
  // whole path, not of the switch): there the move must only not cost a second; no freeze is checked
  // uninstrumented.
  EXPECT_LT(longest, 1000ms) << "the move stalled the viewer";
#else
  EXPECT_EQ(freezes, 0) << "the longest gap between units around the move: " << longest.count() << " ms";
#endif
  viewer.close();
}

}  // namespace
}  // namespace zerohop
