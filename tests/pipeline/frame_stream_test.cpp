// FrameStream end to end in one process: frames this test writes into the stream's input are
// encoded (x264, the CPU path) and handed to a sink of ours; the pipeline reads them in process. And the
// sink contract (zerohop/sinks.hpp): each sink gets the tracks it wants, between attach() and detach().
#include "zerohop/frame_stream.hpp"

#include <gtest/gtest.h>
#include <httplib.h>

#include <atomic>
#include <chrono>
#include <cstring>
#include <mutex>
#include <thread>
#include <vector>

#include "zerohop/clock.hpp"

namespace zerohop {
namespace {

using namespace std::chrono_literals;

class CollectingSink final : public UnitSink {
 public:
  void deliver(const EncodedUnitPtr& unit) override {
    std::lock_guard lock(mutex_);
    if (unit->codec == Codec::kH264) ++units_;
    if (unit->keyframe) ++keyframes_;
  }
  std::string describe() const override { return "test sink"; }
  std::uint64_t units() const {
    std::lock_guard lock(mutex_);
    return units_;
  }
  std::uint64_t keyframes() const {
    std::lock_guard lock(mutex_);
    return keyframes_;
  }

 private:
  mutable std::mutex mutex_;
  std::uint64_t units_ = 0, keyframes_ = 0;
};

// 320x240 NV12 frames through x264 on the CPU path, to `sinks` (and a WHEP server on a free port).
FrameStreamConfig smallStream(std::vector<std::shared_ptr<UnitSink>> sinks, std::uint32_t audioChannels = 0) {
  FrameStreamConfig c;
  c.format = PixelFormat::kNV12;
  c.width = 320;
  c.height = 240;
  c.fps = 30;
  c.gpu = "off";
  c.encoder.encoder = "x264";
  c.stream.port = 0;
  c.audioChannels = audioChannels;
  c.sinks = std::move(sinks);
  return c;
}

// Frame `n` of a moving ramp, stamped with its capture instant.
void pushFrame(FrameStream& stream, std::uint64_t n) {
  InputSlot slot = stream.input().acquireWrite();
  Frame& f = slot.frame();
  for (std::uint32_t y = 0; y < f.height; ++y) std::memset(f.data[0] + y * f.pitch[0], static_cast<int>(y + 3 * n), f.width);
  for (std::uint32_t y = 0; y < f.height / 2; ++y) std::memset(f.data[1] + y * f.pitch[1], 128, f.width);
  Frame meta;
  meta.sequence = n;
  meta.times.mark(Stage::kCapture, monotonicNs());
  stream.input().commit(std::move(slot), meta);
}

TEST(FrameStream, ProgramFramesAreEncodedAndSentInProcessWithoutAShare) {
  auto sink = std::make_shared<CollectingSink>();
  FrameStream stream(smallStream({sink}));

  // Paced as a program at 30 fps would push; bounded: 20 s even on a busy sanitizer run.
  const auto deadline = std::chrono::steady_clock::now() + 20s;
  std::uint64_t n = 0;
  while (sink->units() < 10 && std::chrono::steady_clock::now() < deadline) {
    pushFrame(stream, ++n);
    std::this_thread::sleep_for(33ms);  // the frame interval (pacing, not synchronisation)
  }
  ASSERT_GE(sink->units(), 10u) << "after " << n << " frames: " << (stream.failure() ? stream.failure()->what() : "no failure");
  EXPECT_GE(sink->keyframes(), 1u);
  const PipelineStatus s = stream.status();
  EXPECT_EQ(s.dataPath, "cpu");
  EXPECT_NE(s.sourceDescription.find("in process"), std::string::npos) << s.sourceDescription;
  EXPECT_GE(s.source.frames, 10u);
  EXPECT_GT(s.latency.frames, 0u);
  EXPECT_GT(s.latency.total.p50Ms, 0.0);
  EXPECT_FALSE(stream.failure()) << stream.failure()->what();
  EXPECT_NE(stream.url().find("http://127.0.0.1:"), std::string::npos) << stream.url();

  // The stream's own server answers /stats and /metrics with this pipeline's figures.
  httplib::Client http(stream.url().substr(0, stream.url().size() - 1));  // "http://127.0.0.1:PORT"
  http.set_read_timeout(10, 0);
  const auto stats = http.Get("/stats");
  ASSERT_TRUE(stats) << httplib::to_string(stats.error());
  EXPECT_EQ(stats->status, 200);
  EXPECT_NE(stats->body.find("your frames (FrameStream)"), std::string::npos) << stats->body;
  const auto metrics = http.Get("/metrics");
  ASSERT_TRUE(metrics) << httplib::to_string(metrics.error());
  EXPECT_EQ(metrics->status, 200);
  EXPECT_NE(metrics->body.find("zerohop_"), std::string::npos) << metrics->body.substr(0, 400);
}

// Counts what reaches it by track, and whether anything came outside attach() .. detach().
class TrackCountingSink final : public UnitSink {
 public:
  explicit TrackCountingSink(bool wantsSound) : wantsSound_(wantsSound) {}
  void deliver(const EncodedUnitPtr& unit) override {
    std::lock_guard lock(mutex_);
    if (attaches_ == 0 || detached_) ++outside_;
    if (unit->kind() == MediaKind::kAudio) {
      ++sound_;
      if (unit->codec != Codec::kOpus || unit->bytes.empty()) ++malformed_;
    } else if (unit->track() == TrackKey{}) {
      ++pictures_;
    } else {
      ++otherTracks_;
    }
  }
  bool wants(TrackKey track) const override {
    return track == TrackKey{} || (wantsSound_ && track.codec == Codec::kOpus);
  }
  void attach(const SinkSetup& setup) override {
    std::lock_guard lock(mutex_);
    ++attaches_;
    requesters_ = setup.requestKeyframe && setup.requestTrackKeyframe;
  }
  void detach() override {
    std::lock_guard lock(mutex_);
    detached_ = true;
  }
  std::string describe() const override {
    return wantsSound_ ? "picture and sound (test)" : "picture only (test)";
  }

  struct Counts {
    std::uint64_t pictures = 0, sound = 0, otherTracks = 0, outside = 0, malformed = 0;
    int attaches = 0;
    bool requesters = false, detached = false;
  };
  Counts counts() const {
    std::lock_guard lock(mutex_);
    return {pictures_, sound_, otherTracks_, outside_, malformed_, attaches_, requesters_, detached_};
  }

 private:
  const bool wantsSound_;
  mutable std::mutex mutex_;
  std::uint64_t pictures_ = 0, sound_ = 0, otherTracks_ = 0, outside_ = 0, malformed_ = 0;
  int attaches_ = 0;
  bool requesters_ = false, detached_ = false;
};

TEST(FrameStream, EachSinkGetsTheTracksItWantsBetweenAttachAndDetach) {
  auto withSound = std::make_shared<TrackCountingSink>(true);
  auto picturesOnly = std::make_shared<TrackCountingSink>(false);
  {
    FrameStream stream(smallStream({withSound, picturesOnly}, 1));
    // Frames and 10 ms blocks of sound at their pace until the sink of both has 10 of each (20 s at most).
    const std::vector<std::int16_t> block(480, 1000);
    const auto deadline = std::chrono::steady_clock::now() + 20s;
    for (std::uint64_t n = 1; (withSound->counts().pictures < 10 || withSound->counts().sound < 10) &&
                              std::chrono::steady_clock::now() < deadline;
         ++n) {
      pushFrame(stream, n);
      for (int b = 0; b < 3; ++b) stream.pushAudio(block.data(), block.size());
      std::this_thread::sleep_for(30ms);  // the frame interval (pacing, not synchronisation)
    }
    ASSERT_FALSE(stream.failure()) << stream.failure()->what();
    const TrackCountingSink::Counts running = picturesOnly->counts();
    EXPECT_FALSE(running.detached) << "detached while its pipeline runs";
  }
  const TrackCountingSink::Counts both = withSound->counts(), pictures = picturesOnly->counts();
  EXPECT_GE(both.pictures, 10u);
  EXPECT_GE(both.sound, 10u) << "the sink that wants the Opus track got its packets";
  EXPECT_EQ(both.malformed, 0u) << "every sound unit is a non-empty Opus packet";
  EXPECT_GE(pictures.pictures, 10u);
  EXPECT_EQ(pictures.sound, 0u) << "a sink that does not want the sound got Opus units";
  for (const TrackCountingSink::Counts& k : {both, pictures}) {
    EXPECT_EQ(k.otherTracks, 0u) << "no ladder, no VP8 viewer: nothing but rung 0 and the sound";
    EXPECT_EQ(k.attaches, 1);
    EXPECT_TRUE(k.requesters) << "the setup carries both keyframe requesters";
    EXPECT_TRUE(k.detached) << "the stream ended without detaching its sinks";
    EXPECT_EQ(k.outside, 0u) << "a unit came before attach() or after detach()";
  }
}

}  // namespace
}  // namespace zerohop
