// Stream-your-own-frames against serve's own path, in one run: capture (push) -> sent p50/p99 of
// zerohop::FrameStream fed the test camera's own YUYV picture (PatternFrames: the same content, so
// the encoder pays the same; drawn by this program in host memory, or copied to GPU memory with --device),
// and of a Pipeline on the built-in test camera, the same size and rate, same encoder settings,
// in interleaved rounds (no viewer: "sent" is the unit handed to the sinks). Besides the pipeline's own
// capture -> sent, a sink of this program takes every unit's ingest -> sent (the frame in the
// pipeline's hands -> the unit handed to the sinks), the like-for-like span: the test camera counts
// rendering its picture before ingest, a program's frame is ingested when the capture thread takes it
// from the input queue.
// Steady state: the pipeline's statistics cover its last 300 frames, so a round of 12 s at 30 fps
// leaves the first 2 s out for both paths. Those first frames are slow in both (the encoder's first
// pictures, threads and buffers coming up) and, for frames pushed by a program, they queue behind
// one another where a paced camera would simply deliver later: a 5 s round mixed that start-up into
// the p99 of 150 frames. Start-up before any viewer watches reaches nobody; a viewer's own start is
// the time to its first frame, measured by the browser tests.
//   zerohop_frame_stream_bench [--size 1280x720] [--fps 30] [--seconds 12] [--rounds 3] [--device] [--gpu auto|off|N]
#include <algorithm>
#include <chrono>
#include <deque>
#include <mutex>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "zerohop/clock.hpp"
#include "zerohop/error.hpp"
#include "zerohop/frame_stream.hpp"
#include "zerohop/log.hpp"
#include "zerohop/pipeline.hpp"
#include "source/pattern_frames.hpp"

#if ZEROHOP_BENCH_CUDA
#include <cuda_runtime_api.h>
#endif

using namespace zerohop;

namespace {

struct Args {
  std::uint32_t width = 1280, height = 720;
  double fps = 30;
  int seconds = 12, rounds = 3;  // see the top: >= 300 frames + 2 s at 30 fps
  bool device = false;
  std::string gpu = "auto";
};

/// Every H.264 unit's ingest -> sent, the last kKeep of them (the pipeline's statistics window too).
class IngestToSent final : public UnitSink {
 public:
  static constexpr std::size_t kKeep = 300;
  void deliver(const EncodedUnitPtr& unit) override {
    if (unit->codec != Codec::kH264 || unit->times.at(Stage::kIngest) == 0) return;
    const double ms = double(monotonicNs() - unit->times.at(Stage::kIngest)) / 1e6;
    std::lock_guard lock(mutex_);
    samples_.push_back(ms);
    if (samples_.size() > kKeep) samples_.pop_front();
  }
  std::string describe() const override { return "ingest -> sent probe"; }
  /// {p50, p99} in ms.
  std::pair<double, double> percentiles() const {
    std::lock_guard lock(mutex_);
    std::vector<double> v(samples_.begin(), samples_.end());
    if (v.empty()) return {0, 0};
    std::sort(v.begin(), v.end());
    auto at = [&](double q) { return v[std::min(v.size() - 1, static_cast<std::size_t>(q * double(v.size())))]; };
    return {at(0.50), at(0.99)};
  }

 private:
  mutable std::mutex mutex_;
  std::deque<double> samples_;
};

LatencySnapshot runFrameStream(const Args& a, std::string& path, IngestToSent& probe) {
  FrameStreamConfig c;
  c.format = PixelFormat::kYUYV;
  c.width = a.width;
  c.height = a.height;
  c.fps = a.fps;
  c.memory = a.device ? MemoryKind::kDevice : MemoryKind::kHost;
  c.stream.port = 0;
  c.gpu = a.gpu;
  c.sinks = {std::shared_ptr<UnitSink>(&probe, [](UnitSink*) {})};  // the probe outlives the stream
  FrameStream s(c);
#if ZEROHOP_BENCH_CUDA
  cudaStream_t stream = nullptr;
  if (a.device) cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking);
#endif
  const auto period = std::chrono::nanoseconds(static_cast<std::int64_t>(1e9 / a.fps));
  auto due = std::chrono::steady_clock::now();
  const auto end = due + std::chrono::seconds(a.seconds);
  PatternFrames pattern(PixelFormat::kYUYV, a.width, a.height);
  const auto layout = computeLayout(PixelFormat::kYUYV, a.width, a.height, 64);
  std::vector<std::uint8_t> staging(layout.totalBytes);
  Frame host;
  bindLayout(host, layout, staging.data(), MemoryKind::kHost);
  for (std::uint64_t n = 1; std::chrono::steady_clock::now() < end; ++n) {
    InputSlot slot = s.input().acquireWrite();
    Frame& f = slot.frame();
    Frame& draw = a.device ? host : f;  // device slots: drawn on the host, then one copy up
    draw.format = PixelFormat::kYUYV;
    draw.width = a.width;
    draw.height = a.height;
    pattern.render(draw, n, {static_cast<std::uint64_t>(realtimeNs() / 1'000'000), static_cast<std::uint32_t>(n)});
    f.sequence = n;
    f.times.mark(Stage::kCapture, monotonicNs());  // the frame exists now
    f.wallClockMs = realtimeNs() / 1'000'000;
#if ZEROHOP_BENCH_CUDA
    if (a.device) {
      cudaMemcpy2DAsync(f.data[0], f.pitch[0], host.data[0], host.pitch[0], a.width * 2, a.height, cudaMemcpyHostToDevice,
                        stream);
      s.input().commit(std::move(slot), f, stream);
    }
#endif
    if (!a.device) s.input().commit(std::move(slot), f);
    due += period;
    std::this_thread::sleep_until(due);
  }
  const PipelineStatus st = s.status();
  path = st.latency.frames ? "" : "(no frames)";
  return st.latency;
}

LatencySnapshot runServePath(const Args& a, IngestToSent& probe) {
  PipelineConfig p;
  p.source = parseSourceSpec("test:" + std::to_string(a.width) + "x" + std::to_string(a.height) + "@" +
                             std::to_string(static_cast<int>(a.fps)));
  p.stream.port = 0;
  p.gpu = a.gpu;
  StreamServer server(p.stream);  // the viewers' server: the pipeline binds no port
  p.viewers = server.unnamedStream();
  Pipeline pipeline(p);
  pipeline.addUnitSink(std::shared_ptr<UnitSink>(&probe, [](UnitSink*) {}));  // the probe outlives the pipeline
  pipeline.start();
  std::this_thread::sleep_for(std::chrono::seconds(a.seconds));
  const PipelineStatus st = pipeline.status();
  pipeline.stop();
  return st.latency;
}

}  // namespace

int main(int argc, char** argv) try {
  Args a;
  for (int i = 1; i < argc; ++i) {
    const std::string o = argv[i];
    auto next = [&] { return i + 1 < argc ? std::string(argv[++i]) : std::string(); };
    if (o == "--size") {
      const std::string v = next();
      a.width = std::stoul(v);
      a.height = std::stoul(v.substr(v.find('x') + 1));
    } else if (o == "--fps") a.fps = std::stod(next());
    else if (o == "--seconds") a.seconds = std::stoi(next());
    else if (o == "--rounds") a.rounds = std::stoi(next());
    else if (o == "--device") a.device = true;
    else if (o == "--gpu") a.gpu = next();
  }
  log::setLevel(log::Level::kWarn);
  std::vector<double> own50, own99, serve50, serve99, ownIngest, serveIngest;
  std::vector<double> ownIs50, ownIs99, serveIs50, serveIs99;  // ingest -> sent, per unit
  for (int r = 0; r < a.rounds; ++r) {
    std::string note;
    IngestToSent ownProbe, serveProbe;
    const LatencySnapshot ownL = runFrameStream(a, note, ownProbe);
    const LatencySnapshot serveL = runServePath(a, serveProbe);
    const auto [oi50, oi99] = ownProbe.percentiles();
    const auto [si50, si99] = serveProbe.percentiles();
    ownIs50.push_back(oi50), ownIs99.push_back(oi99), serveIs50.push_back(si50), serveIs99.push_back(si99);
    const Percentiles own = ownL.total, serve = serveL.total;
    ownIngest.push_back(ownL.stage[std::size_t(Stage::kIngest)].p50Ms);
    serveIngest.push_back(serveL.stage[std::size_t(Stage::kIngest)].p50Ms);
    std::printf("round %d: FrameStream %s p50 %.2f p99 %.2f ms (%llu frames), ingest->sent p50 %.2f p99 %.2f | serve path "
                "p50 %.2f p99 %.2f ms (%llu frames), ingest->sent p50 %.2f p99 %.2f\n",
                r + 1, note.c_str(), own.p50Ms, own.p99Ms, (unsigned long long)own.samples, oi50, oi99, serve.p50Ms,
                serve.p99Ms, (unsigned long long)serve.samples, si50, si99);
    own50.push_back(own.p50Ms), own99.push_back(own.p99Ms), serve50.push_back(serve.p50Ms), serve99.push_back(serve.p99Ms);
  }
  auto med = [](std::vector<double> v) {
    std::sort(v.begin(), v.end());
    return v[v.size() / 2];
  };
  std::printf("\n%ux%u@%g, %s frames, --gpu %s, %d rounds of %d s, ms, median of the rounds:\n", a.width,
              a.height, a.fps, a.device ? "device" : "host", a.gpu.c_str(), a.rounds, a.seconds);
  std::printf("| path | ingest -> sent p50 | ingest -> sent p99 | capture -> sent p50 | capture -> sent p99 | capture -> ingest p50 |\n"
              "|---|---|---|---|---|---|\n");
  std::printf("| FrameStream (your frames) | %.2f | %.2f | %.2f | %.2f | %.2f |\n", med(ownIs50), med(ownIs99), med(own50),
              med(own99), med(ownIngest));
  std::printf("| serve (test camera) | %.2f | %.2f | %.2f | %.2f | %.2f |\n", med(serveIs50), med(serveIs99), med(serve50),
              med(serve99), med(serveIngest));
  std::printf("| ratio | %.2fx | %.2fx | %.2fx | %.2fx | |\n", med(ownIs50) / med(serveIs50), med(ownIs99) / med(serveIs99),
              med(own50) / med(serve50), med(own99) / med(serve99));
  return 0;
} catch (const Error& e) {
  std::fprintf(stderr, "zerohop_frame_stream_bench: %s\n", e.what());
  return 1;
}
