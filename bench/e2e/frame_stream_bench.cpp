// Stream-your-own-frames against serve's own path, in one run: capture (push) -> sent p50/p99 of
// zerohop::FrameStream fed the test camera's own YUYV picture (PatternFrames: the same content, so
// the encoder pays the same; drawn by this program in host memory, or copied to GPU memory with --device),
// and of a Pipeline on the built-in test camera, the same size and rate, same encoder settings,
// in interleaved rounds (no viewer: "sent" is the unit handed to the sinks).
// Steady state: the pipeline's statistics cover its last 300 frames, so a round of 12 s at 30 fps
// leaves the first 2 s out for both paths. Those first frames are slow in both (the encoder's first
// pictures, threads and buffers coming up) and, for frames pushed by a program, they queue behind
// one another where a paced camera would simply deliver later: a 5 s round mixed that start-up into
// the p99 of 150 frames. Start-up before any viewer watches reaches nobody; a viewer's own start is
// the time to its first frame, measured by the browser tests.
//   zerohop_frame_stream_bench [--size 1280x720] [--fps 30] [--seconds 12] [--rounds 3] [--device] [--gpu auto|off|N]
#include <algorithm>
#include <chrono>
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

LatencySnapshot runFrameStream(const Args& a, std::string& path) {
  FrameStreamConfig c;
  c.format = PixelFormat::kYUYV;
  c.width = a.width;
  c.height = a.height;
  c.fps = a.fps;
  c.memory = a.device ? MemoryKind::kDevice : MemoryKind::kHost;
  c.stream.port = 0;
  c.gpu = a.gpu;
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

LatencySnapshot runServePath(const Args& a) {
  PipelineConfig p;
  p.source = parseSourceSpec("test:" + std::to_string(a.width) + "x" + std::to_string(a.height) + "@" +
                             std::to_string(static_cast<int>(a.fps)));
  p.stream.port = 0;
  p.gpu = a.gpu;
  Pipeline pipeline(p);
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
  std::vector<double> own50, own99, serve50, serve99, ownIngest, serveIngest, ownRest, serveRest;
  // From ingest on (convert + encode + send p50s): what the pipeline adds after the frame exists. The
  // test camera counts rendering its frame as ingest; a FrameStream frame is ingested when the
  // pipeline's capture thread takes it from the input queue.
  auto rest = [](const LatencySnapshot& l) {
    return l.stage[std::size_t(Stage::kConvert)].p50Ms + l.stage[std::size_t(Stage::kEncode)].p50Ms +
           l.stage[std::size_t(Stage::kSend)].p50Ms;
  };
  for (int r = 0; r < a.rounds; ++r) {
    std::string note;
    const LatencySnapshot ownL = runFrameStream(a, note);
    const LatencySnapshot serveL = runServePath(a);
    const Percentiles own = ownL.total, serve = serveL.total;
    ownIngest.push_back(ownL.stage[std::size_t(Stage::kIngest)].p50Ms);
    serveIngest.push_back(serveL.stage[std::size_t(Stage::kIngest)].p50Ms);
    ownRest.push_back(rest(ownL));
    serveRest.push_back(rest(serveL));
    std::printf("round %d: FrameStream %s p50 %.2f p99 %.2f ms (%llu frames) | serve path p50 %.2f p99 %.2f ms (%llu frames)\n",
                r + 1, note.c_str(), own.p50Ms, own.p99Ms, (unsigned long long)own.samples, serve.p50Ms, serve.p99Ms,
                (unsigned long long)serve.samples);
    own50.push_back(own.p50Ms), own99.push_back(own.p99Ms), serve50.push_back(serve.p50Ms), serve99.push_back(serve.p99Ms);
  }
  auto med = [](std::vector<double> v) {
    std::sort(v.begin(), v.end());
    return v[v.size() / 2];
  };
  std::printf("\n%ux%u@%g, %s frames, --gpu %s, %d rounds of %d s, capture -> sent (ms), median of the rounds:\n", a.width,
              a.height, a.fps, a.device ? "device" : "host", a.gpu.c_str(), a.rounds, a.seconds);
  std::printf("| path | capture -> sent p50 | p99 | capture -> ingest p50 | ingest -> sent (sum of stage p50s) |\n|---|---|---|---|---|\n");
  std::printf("| FrameStream (your frames) | %.2f | %.2f | %.2f | %.2f |\n", med(own50), med(own99), med(ownIngest), med(ownRest));
  std::printf("| serve (test camera) | %.2f | %.2f | %.2f | %.2f |\n", med(serve50), med(serve99), med(serveIngest), med(serveRest));
  std::printf("| ratio | %.2fx | %.2fx | | %.2fx |\n", med(own50) / med(serve50), med(own99) / med(serve99),
              med(ownRest) / med(serveRest));
  return 0;
} catch (const Error& e) {
  std::fprintf(stderr, "zerohop_frame_stream_bench: %s\n", e.what());
  return 1;
}
