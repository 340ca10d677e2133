// FrameStream end to end in one process: frames this test writes into the stream's input are
// encoded (x264, the CPU path) and handed to a sink of ours; the pipeline reads them in process.
#include "zerohop/frame_stream.hpp"

#include <gtest/gtest.h>

#include <chrono>
#include <cstring>
#include <mutex>
#include <thread>

#include "zerohop/clock.hpp"

namespace zerohop {
namespace {

using namespace std::chrono_literals;

class CollectingSink final : public UnitSink {
 public:
  void deliver(const EncodedUnitPtr& unit) override {
    std::lock_guard lock(mutex_);
    if (unit->codec == PixelFormat::kH264) ++units_;
    if (unit->keyframe) ++keyframes_;
  }
  void setKeyframeRequester(std::function<void()>) override {}
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

TEST(FrameStream, ProgramFramesAreEncodedAndSentInProcessWithoutAShare) {
  auto sink = std::make_shared<CollectingSink>();
  FrameStreamConfig c;
  c.format = PixelFormat::kNV12;
  c.width = 320;
  c.height = 240;
  c.fps = 30;
  c.gpu = "off";
  c.encoder.encoder = "x264";
  c.stream.port = 0;
  c.sinks = {sink};
  FrameStream stream(c);

  // Paced as a program at 30 fps would push; bounded: 20 s even on a busy sanitizer run.
  const auto deadline = std::chrono::steady_clock::now() + 20s;
  std::uint64_t n = 0;
  while (sink->units() < 10 && std::chrono::steady_clock::now() < deadline) {
    InputSlot slot = stream.input().acquireWrite();
    Frame& f = slot.frame();
    for (std::uint32_t y = 0; y < f.height; ++y) std::memset(f.data[0] + y * f.pitch[0], static_cast<int>(y + 3 * n), f.width);
    for (std::uint32_t y = 0; y < f.height / 2; ++y) std::memset(f.data[1] + y * f.pitch[1], 128, f.width);
    Frame meta;
    meta.sequence = ++n;
    meta.times.mark(Stage::kCapture, monotonicNs());
    stream.input().commit(std::move(slot), meta);
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
}

}  // namespace
}  // namespace zerohop
