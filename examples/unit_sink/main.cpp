// zerohop's encoded units into your own WebRTC stack (docs/plugin-guide.md, section 3): a UnitSink
// queues each H.264 access unit for a thread of its own (your packetiser) and asks for a keyframe the
// way an RTCP PLI handler would. Frames come from a FrameStream this program feeds; a Pipeline on a
// camera or a share takes the same sink (Pipeline::addUnitSink).
//   unit_sink [--units N]     reads N units (default 90), asks for one keyframe halfway, then exits;
//                             exit code 0 when the units were whole Annex B and the keyframe came
#include <zerohop/clock.hpp>
#include <zerohop/error.hpp>
#include <zerohop/frame_stream.hpp>
#include <zerohop/sinks.hpp>

#include <atomic>
#include <condition_variable>
#include <cstdio>
#include <cstring>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>

namespace {

// The sink: deliver() runs on zerohop's encode thread and must not block, so it only queues the
// pointer (dropping the oldest past 30); the bytes live as long as the pointer, shared and immutable.
class MyWebRtcSink final : public zerohop::UnitSink {
 public:
  void deliver(const zerohop::EncodedUnitPtr& unit) override {
    {
      std::lock_guard lock(mutex_);
      if (queue_.size() == 30) queue_.pop_front();
      queue_.push_back(unit);
    }
    ready_.notify_one();
  }
  // Before the first unit: what the pipeline offers (its keyframe requester; the ladder, the codecs).
  void attach(const zerohop::SinkSetup& setup) override {
    std::lock_guard lock(mutex_);
    requestKeyframe_ = setup.requestKeyframe;
  }
  // After the last unit: the pipeline is going away; never call its requester again.
  void detach() override {
    std::lock_guard lock(mutex_);
    requestKeyframe_ = nullptr;
  }
  std::string describe() const override { return "my WebRTC stack (the unit_sink example)"; }

  // Your RTCP PLI/FIR handler: any thread, never blocks.
  void onPli() {
    std::function<void()> request;
    {
      std::lock_guard lock(mutex_);
      request = requestKeyframe_;
    }
    if (request) request();
  }
  // Your packetiser's thread: the next unit, or null after `timeout`.
  zerohop::EncodedUnitPtr next(std::chrono::milliseconds timeout) {
    std::unique_lock lock(mutex_);
    if (!ready_.wait_for(lock, timeout, [&] { return !queue_.empty(); })) return nullptr;
    auto unit = queue_.front();
    queue_.pop_front();
    return unit;
  }

 private:
  std::function<void()> requestKeyframe_;
  std::mutex mutex_;
  std::condition_variable ready_;
  std::deque<zerohop::EncodedUnitPtr> queue_;
};

bool startsWithStartCode(const zerohop::EncodedUnit& u) {
  static const std::uint8_t four[] = {0, 0, 0, 1}, three[] = {0, 0, 1};
  return (u.bytes.size() > 4 && std::memcmp(u.bytes.data(), four, 4) == 0) ||
         (u.bytes.size() > 3 && std::memcmp(u.bytes.data(), three, 3) == 0);
}

}  // namespace

int main(int argc, char** argv) try {
  int wanted = 90;
  for (int i = 1; i + 1 < argc; i += 2) {
    if (std::string(argv[i]) == "--units") wanted = std::stoi(argv[i + 1]);
  }
  auto sink = std::make_shared<MyWebRtcSink>();
  zerohop::FrameStreamConfig config;
  config.width = 320;
  config.height = 240;
  config.fps = 30;
  config.gpu = "off";
  config.stream.port = 0;            // the stream's own WHEP server too, on a free port
  config.encoder.keyframeIntervalFrames = 0;  // keyframes on request only: the one after the PLI is ours
  config.sinks.push_back(sink);
  zerohop::FrameStream stream(config);

  std::atomic<bool> stop{false};
  std::thread producer([&] {  // your renderer: a grey picture that brightens
    auto due = std::chrono::steady_clock::now();
    for (std::uint64_t n = 1; !stop.load(); ++n) {
      zerohop::InputSlot slot = stream.input().acquireWrite();
      zerohop::Frame& f = slot.frame();
      for (std::uint32_t y = 0; y < f.height; ++y) std::memset(f.data[0] + y * f.pitch[0], static_cast<int>(n % 200), f.width);
      for (std::uint32_t y = 0; y < f.height / 2; ++y) std::memset(f.data[1] + y * f.pitch[1], 128, f.width);
      f.sequence = n;
      f.times.mark(zerohop::Stage::kCapture, zerohop::monotonicNs());
      stream.input().commit(std::move(slot), f);
      due += std::chrono::milliseconds(33);
      std::this_thread::sleep_until(due);
    }
  });

  int units = 0, keyframes = 0, notAnnexB = 0, keyframesAfterPli = 0;
  for (auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
       units < wanted && std::chrono::steady_clock::now() < deadline;) {
    zerohop::EncodedUnitPtr unit = sink->next(std::chrono::milliseconds(500));
    if (!unit) continue;
    ++units;  // your packetiser: RTP packets of unit->bytes, timestamp from unit->ptsNs (90 kHz)
    if (!startsWithStartCode(*unit)) ++notAnnexB;
    if (unit->keyframe) {
      ++keyframes;
      if (units > wanted / 2) ++keyframesAfterPli;
    }
    if (units == wanted / 2) sink->onPli();  // a receiver lost a picture: ask for a keyframe
  }
  stop = true;
  producer.join();
  std::printf("unit_sink: %d units (%d keyframes, %d after the PLI), %d not Annex B, %ux%u\n", units, keyframes,
              keyframesAfterPli, notAnnexB, config.width, config.height);
  if (units < wanted || keyframes < 1 || notAnnexB > 0 || keyframesAfterPli < 1) {
    std::fprintf(stderr, "unit_sink: FAIL: want %d whole units, a first keyframe and one after the PLI\n", wanted);
    return 1;
  }
  return 0;
} catch (const zerohop::Error& e) {
  std::fprintf(stderr, "unit_sink: %s\n", e.what());
  return 1;
}
