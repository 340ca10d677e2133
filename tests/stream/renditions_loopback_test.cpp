// Renditions end to end on loopback (docs/ARCHITECTURE.md, "Renditions"): two GStreamer viewers of one
// stream with a two-rung ladder (320x240 and 160x120, both published each frame as the pipeline's
// rungs would be). One viewer loses a third of its packets: its own estimate falls, it alone moves to
// the lower rung, at that rung's keyframe, on the same track (no renegotiation: no second POST), and its
// parsed picture size becomes 160; the other viewer's rung, size and bitrate stay as they were. A
// move on a clean link costs the viewer no freeze (no gap over 200 ms between its units around it). And a
// viewer's own choice over its layer URL moves it alone, down and back up, and bad requests say why.
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
  for (const EncodedUnitPtr& u : encodeTestUnits(90, Codec::kH264, width, height)) {
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
  // Feeds the server's unnamed stream with `ladder` (empty: no ladder).
  LadderPublisher(StreamServer& server, std::vector<std::vector<EncodedUnitPtr>> rungs,
                  std::vector<Rendition> ladder)
      : stream_(server.unnamedStream()), rungs_(std::move(rungs)), next_(rungs_.size(), 0) {
    SinkSetup setup;
    setup.requestKeyframe = [this] { idrWanted_ = true; };
    setup.ladder = std::move(ladder);
    stream_->attach(setup);
  }
  // Once this returns the stream never calls the requester again (detach() drops it under the server's lock).
  ~LadderPublisher() { stream_->detach(); }
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
        stream_->deliver(units[next_[r]]);
        next_[r] = (next_[r] + 1) % units.size();
      }
      std::this_thread::sleep_for(33ms);
    }
  }

 private:
  std::shared_ptr<WhepStream> stream_;
  std::vector<std::vector<EncodedUnitPtr>> rungs_;
  std::vector<std::size_t> next_;
  std::atomic<bool> idrWanted_{false};
};

// Under TSan the send path itself stalls now and then (instrumented, ~10x slower): a stall reads as a
// delay trend, the delay-based estimate falls to 0.85 x what was acknowledged (a 320x240 test stream's
// ~300 kb/s: the floor), and the viewer is rightly moved to rung 1 without any loss (CI, stop 47: the
// clean viewer 0.8 s after it joined; here, on an idle box, 1 run in 4 of the layer-choice test). There
// the tests check the moves they cause and, through TSan, the switching code's threads; that a viewer
// nobody disturbed stays on rung 0 is checked in the uninstrumented build (ASan too until ci37: there a
// loaded box bounced the choosing viewer down and up again once, 4 switches for its 2).
#if defined(__SANITIZE_THREAD__) || defined(__SANITIZE_ADDRESS__)
constexpr bool kUndisturbedViewersStayUp = false;
#else
constexpr bool kUndisturbedViewersStayUp = true;
#endif

std::optional<ViewerStats> statsOf(const StreamServer& server, const LoopbackViewer& viewer) {
  const std::string id = viewer.location.substr(viewer.location.rfind('/') + 1).substr(0, 8);
  for (const ViewerStats& s : server.viewerStats()) {
    if (s.id == id) return s;
  }
  return std::nullopt;
}

// Each test needs a loopback viewer's GStreamer elements: skipped, naming the one missing, without them.
class RenditionsLoopback : public ::testing::Test {
 protected:
  void SetUp() override {
    if (const std::string missing = missingLoopbackElement(); !missing.empty())
      GTEST_SKIP() << "GStreamer element " << missing << " is not installed (scripts/install-deps.sh)";
  }
  // A StreamServer on a free port, its unnamed stream with a 1000 kb/s ceiling (LadderPublisher gives
  // it the ladder).
  static std::unique_ptr<StreamServer> ladderServer() {
    StreamConfig config;
    config.port = 0;
    auto server = std::make_unique<StreamServer>(config);
    server->unnamedStream()->setMaxBitrate(1000);
    return server;
  }
};

TEST_F(RenditionsLoopback, ALossyViewerMovesAloneToTheLowerRungAtItsKeyframeWithoutRenegotiation) {
  std::vector<std::vector<EncodedUnitPtr>> rungs{rungUnits(320, 240, 0), rungUnits(160, 120, 1)};
  ASSERT_EQ(rungs[0].size(), 90u);
  ASSERT_EQ(rungs[1].size(), 90u);
  auto serverPtr = ladderServer();
  StreamServer& server = *serverPtr;
  LadderPublisher publisher(server, std::move(rungs), {{320, 240, 600, 1000}, {160, 120, 100, 600}});
  LoopbackViewer clean(true), lossy(true);
  ASSERT_TRUE(connectOverWhep(clean, server));
  ASSERT_TRUE(connectOverWhep(lossy, server));

  const auto joined = std::chrono::steady_clock::now() + 15s;
  publisher.publishWhile([&] {
    return (clean.receivedUnits < 30 || lossy.receivedUnits < 30) &&
           std::chrono::steady_clock::now() < joined;
  });
  ASSERT_GE(clean.receivedUnits.load(), 30);
  ASSERT_GE(lossy.receivedUnits.load(), 30);
  if (kUndisturbedViewersStayUp) {
    EXPECT_EQ(clean.width.load(), 320);
    EXPECT_EQ(lossy.width.load(), 320) << "both start on rung 0";
    EXPECT_FALSE(server.unnamedStream()->wants(TrackKey{Codec::kH264, 1}))
        << "no viewer is on rung 1: it is not wanted (so not encoded)";
  }

  ASSERT_TRUE(lossy.loseOneIn(3));
  const auto moved = std::chrono::steady_clock::now() + 30s;
  publisher.publishWhile([&] {
    const auto s = statsOf(server, lossy);
    return !(s && s->rung == 1 && lossy.width.load() == 160) && std::chrono::steady_clock::now() < moved;
  });
  const auto l = statsOf(server, lossy);
  ASSERT_TRUE(l);
  std::printf("lossy viewer: estimate %.0f kb/s, rung %d, switches %llu, width %d\n", l->estimateKbps,
              l->rung, static_cast<unsigned long long>(l->rungSwitches), lossy.width.load());
  EXPECT_EQ(l->rung, 1) << "the lossy viewer did not move to rung 1 within 30 s (its estimate: "
                        << l->estimateKbps << ")";
  EXPECT_GE(l->rungSwitches, 1u);
  EXPECT_EQ(lossy.width.load(), 160) << "its track did not carry rung 1's pictures";
  EXPECT_LT(l->estimateKbps, 600);
  EXPECT_TRUE(server.unnamedStream()->wants(TrackKey{Codec::kH264, 1}));

  // A second more of the lossy viewer on rung 1: the clean one was never moved, and its own estimate
  // and rung 0's target are its own (not the lossy viewer's).
  const auto more = std::chrono::steady_clock::now() + 1s;
  publisher.publishWhile([&] { return std::chrono::steady_clock::now() < more; });
  const auto c = statsOf(server, clean);
  ASSERT_TRUE(c);
  std::printf("clean viewer: estimate %.0f kb/s, rung %d, switches %llu, rung 0 target %.0f kb/s\n",
              c->estimateKbps, c->rung, static_cast<unsigned long long>(c->rungSwitches),
              c->encodeTargetKbps);
  if (kUndisturbedViewersStayUp) {
    EXPECT_EQ(c->rung, 0);
    EXPECT_EQ(c->rungSwitches, 0u);
    EXPECT_EQ(clean.width.load(), 320);
    EXPECT_GE(c->estimateKbps, 600) << "the clean viewer's estimate fell with the lossy viewer's";
    EXPECT_GE(server.unnamedStream()->targetBitrateKbps(), 600u)
        << "rung 0's encode followed the lossy viewer";
  }
  EXPECT_EQ(server.viewerCount(), 2u) << "a switch must not end or add a session (no renegotiation)";
  clean.close();
  lossy.close();
}

// A move between rungs costs no freeze: on a clean link, the viewer whose estimate (at most the 1000
// kb/s ceiling) is below rung 0's need (1200) moves to rung 1 at its first feedback; around that move
// (a second either side of its first 160-wide unit) no two units it received are more than 200 ms apart.
TEST_F(RenditionsLoopback, AMoveBetweenRungsOnACleanLinkCostsNoFreeze) {
  auto serverPtr = ladderServer();
  StreamServer& server = *serverPtr;
  LadderPublisher publisher(server, {rungUnits(320, 240, 0), rungUnits(160, 120, 1)},
                            {{320, 240, 1200, 1500}, {160, 120, 100, 1000}});
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
  std::printf(
      "move to rung 1: %d freezes (gaps > 200 ms) within 1 s of it, longest gap %lld ms, %llu switch(es)\n",
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

// A viewer chooses its highest rung over its session's layer URL (the 201's Link): POST {"encodingId":"1"}
// moves it alone to rung 1 at that rung's keyframe, {} lets its clean link's estimate take it back to
// rung 0 at once; GET lists the ladder and the choice; a change within a second of the last is refused
// (429: each asks a keyframe of a shared encode), a malformed choice, an unknown session and a wrong type
// are refused with the reason.
TEST_F(RenditionsLoopback, AViewersOwnChoiceMovesItAloneDownAndBackUp) {
  auto serverPtr = ladderServer();
  StreamServer& server = *serverPtr;
  LadderPublisher publisher(server, {rungUnits(320, 240, 0), rungUnits(160, 120, 1)},
                            {{320, 240, 600, 1000}, {160, 120, 100, 600}});
  LoopbackViewer chooser(true), other(true);
  ASSERT_TRUE(connectOverWhep(chooser, server));
  ASSERT_TRUE(connectOverWhep(other, server));
  const std::string layer = chooser.location + "/layer";
  ASSERT_EQ(std::count_if(chooser.links.begin(), chooser.links.end(),
                          [&](const std::string& l) {
                            return l == "<" + layer + ">; rel=\"urn:ietf:params:whep:ext:core:layer\"";
                          }),
            1)
      << "the 201 links the session's layer URL";
  const auto both = std::chrono::steady_clock::now() + 15s;
  publisher.publishWhile([&] {
    return (chooser.width.load() != 320 || other.width.load() != 320) &&
           std::chrono::steady_clock::now() < both;
  });
  if (kUndisturbedViewersStayUp) {
    ASSERT_EQ(chooser.width.load(), 320);
  }
  ASSERT_GT(chooser.width.load(), 0) << "the chooser received no picture in 15 s";

  httplib::Client cli("127.0.0.1", server.port());
  cli.set_read_timeout(5, 0);
  auto listed = cli.Get(layer);
  ASSERT_TRUE(listed);
  EXPECT_EQ(listed->status, 200);
  EXPECT_NE(listed->body.find(R"("encodingId":null)"), std::string::npos) << listed->body;
  EXPECT_NE(listed->body.find(R"({"encodingId":"1","height":120,"maxKbps":600,"minKbps":100,"width":160})"),
            std::string::npos)
      << listed->body;

  const auto chosenAt = std::chrono::steady_clock::now();
  auto chose = cli.Post(layer, R"({"encodingId":"1"})", "application/json");
  ASSERT_TRUE(chose);
  ASSERT_EQ(chose->status, 200) << chose->body;
  const auto down = std::chrono::steady_clock::now() + 5s;
  publisher.publishWhile(
      [&] { return chooser.width.load() != 160 && std::chrono::steady_clock::now() < down; });
  EXPECT_EQ(chooser.width.load(), 160) << "its track did not carry rung 1 within 5 s of its choice";
  EXPECT_EQ(statsOf(server, chooser)->rung, 1);

  auto again = cli.Post(layer, R"({"encodingId":"1"})", "application/json");
  ASSERT_TRUE(again);
  EXPECT_EQ(again->status, 200) << "repeating the choice is free: " << again->body;
  auto tooSoon = cli.Post(layer, "{}", "application/json");
  ASSERT_TRUE(tooSoon);
  if (std::chrono::steady_clock::now() - chosenAt < 900ms) {  // a slow box may have taken the second already
    EXPECT_EQ(tooSoon->status, 429) << "a change within a second of the last: " << tooSoon->body;
    EXPECT_EQ(tooSoon->get_header_value("Retry-After"), "1");
  }
  const auto gap = std::chrono::steady_clock::now() + 1100ms;
  publisher.publishWhile([&] { return std::chrono::steady_clock::now() < gap; });
  auto automatic = cli.Post(layer, "{}", "application/json");
  ASSERT_TRUE(automatic);
  ASSERT_EQ(automatic->status, 200) << automatic->body;
  const auto up = std::chrono::steady_clock::now() + 5s;
  publisher.publishWhile(
      [&] { return chooser.width.load() != 320 && std::chrono::steady_clock::now() < up; });
  const auto c = statsOf(server, chooser);
  const auto o = statsOf(server, other);
  ASSERT_TRUE(c && o);
  if (kUndisturbedViewersStayUp) {
    EXPECT_EQ(chooser.width.load(), 320) << "back to rung 0 within 5 s of giving the choice back";
    EXPECT_EQ(c->rungSwitches, 2u);
    EXPECT_EQ(o->rungSwitches, 0u) << "the other viewer moved";
    EXPECT_EQ(other.width.load(), 320);
  } else {
    // Under a sanitizer the estimates wander, and a viewer goes up a rung only once its estimate has held
    // that rung's minimum for 3 s (RenditionPlacement): a rung that lags a rising estimate is right for
    // those 3 s. Bounded wait for the two to agree.
    std::optional<ViewerStats> now = c;
    const auto agree = std::chrono::steady_clock::now() + 5s;
    publisher.publishWhile([&] {
      now = statsOf(server, chooser);
      return now && now->rung != (now->estimateKbps >= 600 ? 0 : 1) &&
             std::chrono::steady_clock::now() < agree;
    });
    ASSERT_TRUE(now);
    EXPECT_EQ(now->rung, now->estimateKbps >= 600 ? 0 : 1) << "back to what its own estimate allows";
  }
  EXPECT_EQ(server.viewerCount(), 2u) << "a choice must not end or add a session";

  auto bad = cli.Post(layer, R"({"encodingId":"7"})", "application/json");
  ASSERT_TRUE(bad);
  EXPECT_EQ(bad->status, 400);
  EXPECT_NE(bad->body.find("0 to 1"), std::string::npos) << bad->body;
  auto text = cli.Post(layer, "1", "text/plain");
  ASSERT_TRUE(text);
  EXPECT_EQ(text->status, 415) << text->body;
  auto unknown = cli.Post("/whep/0123456789abcdef/layer", "{}", "application/json");
  ASSERT_TRUE(unknown);
  EXPECT_EQ(unknown->status, 404) << unknown->body;
  chooser.close();
  other.close();
}

// Without a ladder there is nothing to choose: no layer Link in the 201, and the layer URL says why (409).
TEST_F(RenditionsLoopback, WithoutALadderTheLayerUrlSaysThereIsNothingToChoose) {
  auto serverPtr = ladderServer();
  StreamServer& server = *serverPtr;
  LadderPublisher publisher(server, {rungUnits(320, 240, 0)}, {});
  LoopbackViewer viewer(true);
  ASSERT_TRUE(connectOverWhep(viewer, server));
  for (const std::string& link : viewer.links)
    EXPECT_EQ(link.find("ext:core:layer"), std::string::npos) << link;
  httplib::Client cli("127.0.0.1", server.port());
  cli.set_read_timeout(5, 0);
  auto r = cli.Post(viewer.location + "/layer", R"({"encodingId":"1"})", "application/json");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 409);
  EXPECT_NE(r->body.find("no renditions to choose from"), std::string::npos) << r->body;
  EXPECT_EQ(r->body.find("--"), std::string::npos) << "the library names no CLI flag: " << r->body;
  viewer.close();
}

}  // namespace
}  // namespace zerohop
