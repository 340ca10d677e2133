// Per-frame encode latency and CPU of serve's x264 settings, next to FFmpeg's CLI with the same
// settings on the same raw frames in the same run; then (under the emulated camera) camera buffer ->
// handed to the WebRTC sender for H.264 passthrough against the convert + x264 path.
//
//   zerohop_encode_latency_bench [--frames N] [--ffmpeg PATH]
//   zerohop-camemu --format h264 --size 1280x720 -- zerohop_encode_latency_bench [--frames N]
//
// Part 1, x264: N frames of the test camera's picture (textured, noisy, moving) are rendered and
// converted to I420 first (not timed) and written to a raw file. zerohop's encoder (makeEncoder, the
// pipeline's EncoderConfig: superfast, zerolatency, constrained baseline, CBR with a one-frame VBV,
// IDR every 120 frames, 1 thread) encodes them one call per frame: wall time per call (p50/p99/max)
// and the thread's CPU time. Then `ffmpeg -c:v libx264` with the same preset/tune/profile/level/VBV/GOP
// encodes the raw file: per-frame wall time of its encode step from -benchmark_all, and its whole
// CPU time (wait4 rusage; includes reading the raw file, which is small).
// Part 2, only under zerohop-camemu: the pipeline's own data paths (src/pipeline FrameProcessor)
// driven on one thread from the emulated camera, N frames each: passthrough (H.264 camera) and
// convert + x264 (YUYV camera), ingest (dequeued) -> WhepStream::deliver() returned. RTP
// packetisation (rtph264pay, per viewer) is the same for both and not included; no viewer is connected.
#include <fcntl.h>
#include <spawn.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <fstream>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "convert/test_image.hpp"
#include "pipeline/frame_processor.hpp"
#include "source/pattern_frames.hpp"
#include "zerohop/clock.hpp"
#include "convert/converter.hpp"
#include "zerohop/encoder.hpp"
#include "zerohop/error.hpp"
#include "zerohop/log.hpp"
#include "zerohop/stream_server.hpp"

extern char** environ;

namespace zerohop {
namespace {

using testing::TestImage;

struct Summary {
  double p50 = 0, p99 = 0, max = 0, mean = 0;
};

Summary summarize(std::vector<double> ms) {
  Summary s;
  if (ms.empty()) return s;
  std::sort(ms.begin(), ms.end());
  auto rank = [&](double q) { return ms[std::min(ms.size() - 1, static_cast<std::size_t>(q * ms.size()))]; };
  s.p50 = rank(0.5);
  s.p99 = rank(0.99);
  s.max = ms.back();
  for (double v : ms) s.mean += v;
  s.mean /= static_cast<double>(ms.size());
  return s;
}

double threadCpuMs() {
  timespec t{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
  return static_cast<double>(t.tv_sec) * 1e3 + static_cast<double>(t.tv_nsec) / 1e6;
}

EncoderConfig serveEncoderConfig(std::uint32_t width, std::uint32_t height) {
  EncoderConfig c;  // the pipeline's defaults: superfast, 1 thread, IDR every 120 frames
  c.encoder = "x264";
  c.width = width;
  c.height = height;
  c.fps = 30;
  c.bitrateKbps = height >= 1080 ? 5000 : 2500;
  return c;
}

// Renders and converts `n` camera frames to I420; appends them to `raw` (yuv420p, no padding).
std::vector<TestImage> cameraFrames(std::uint32_t width, std::uint32_t height, int n, const std::string& raw) {
  PatternFrames pattern(PixelFormat::kYUYV, width, height);
  TestImage yuyv(PixelFormat::kYUYV, width, height);
  auto converter = makeCpuConverter();
  std::vector<TestImage> frames;
  std::ofstream out(raw, std::ios::binary | std::ios::trunc);
  for (int i = 0; i < n; ++i) {
    const auto idx = static_cast<std::uint64_t>(i);
    pattern.render(yuyv.frame(), idx, Timecode{1'700'000'000'000ull + idx * 33, static_cast<std::uint32_t>(i)});
    frames.emplace_back(PixelFormat::kI420, width, height);
    converter->convert(yuyv.frame(), frames.back().frame());
    out.write(reinterpret_cast<const char*>(frames.back().frame().data[0]),
              static_cast<std::streamsize>(frames.back().frame().bytesUsed));
  }
  return frames;
}

void ourX264(const std::vector<TestImage>& frames, const EncoderConfig& cfg) {
  auto encoder = makeEncoder(cfg);
  std::vector<double> wall;
  std::size_t bytes = 0;
  const double cpu0 = threadCpuMs();
  for (const auto& f : frames) {
    const std::int64_t t0 = monotonicNs();
    auto unit = encoder->encode(f.frame(), false);
    wall.push_back(static_cast<double>(monotonicNs() - t0) / 1e6);
    if (unit) bytes += unit->bytes.size();
  }
  const double cpu = (threadCpuMs() - cpu0) / static_cast<double>(frames.size());
  const Summary s = summarize(wall);
  std::printf("  zerohop x264   %3ux%-4u per frame: p50 %6.2f ms  p99 %6.2f ms  max %6.2f ms | CPU %6.2f ms/frame | %6.0f kb/s\n",
              cfg.width, cfg.height, s.p50, s.p99, s.max, cpu,
              static_cast<double>(bytes) * 8 * cfg.fps / static_cast<double>(frames.size()) / 1000);
}

// Runs `args` (argv[0] = program) and returns its exit status; `usage` gets its rusage.
int runChild(const std::vector<std::string>& args, const std::string& logPath, rusage& usage) {
  std::vector<char*> argv;
  for (const auto& a : args) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 2, logPath.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  posix_spawn_file_actions_addopen(&actions, 1, "/dev/null", O_WRONLY, 0);
  pid_t pid = 0;
  const int err = posix_spawnp(&pid, argv[0], &actions, nullptr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  if (err != 0) throwErrno("posix_spawnp", err, args[0]);
  int status = 0;
  if (wait4(pid, &status, 0, &usage) < 0) throwErrno("wait4", errno, args[0]);
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128;
}

void ffmpegX264(const std::string& ffmpeg, const std::string& raw, int frames, const EncoderConfig& cfg) {
  const int level = h264LevelIdc(cfg.width, cfg.height, cfg.fps, cfg.bitrateKbps);
  const std::string kbps = std::to_string(cfg.bitrateKbps) + "k";
  const std::string vbvBits = std::to_string(static_cast<long long>(cfg.bitrateKbps * 1000.0 / cfg.fps));
  const std::string out = raw + ".ffmpeg.h264";
  const std::string log = raw + ".ffmpeg.log";
  const std::vector<std::string> args = {
      ffmpeg, "-hide_banner", "-nostdin", "-y", "-loglevel", "info", "-benchmark_all",
      "-f", "rawvideo", "-pix_fmt", "yuv420p", "-s", std::to_string(cfg.width) + "x" + std::to_string(cfg.height),
      "-r", "30", "-i", raw,
      "-c:v", "libx264", "-preset", cfg.preset, "-tune", "zerolatency", "-profile:v", "baseline",
      "-level", std::to_string(level / 10) + "." + std::to_string(level % 10),
      "-b:v", kbps, "-maxrate", kbps, "-bufsize", vbvBits, "-g", std::to_string(cfg.keyframeIntervalFrames),
      "-bf", "0", "-threads", "1", "-forced-idr", "1", "-x264-params", "repeat-headers=1:scenecut=0",
      "-f", "h264", out};
  rusage usage{};
  if (const int rc = runChild(args, log, usage); rc != 0) {
    std::printf("  ffmpeg CLI: exit %d (see %s)\n", rc, log.c_str());
    return;
  }
  // -benchmark_all: "bench: <user us> user <sys us> sys <real us> real <step>" after each step. FFmpeg 5.1
  // prints encode_video twice a frame (avcodec_send_frame, where libx264 encodes, then receive_packet);
  // a frame's encode latency is the sum of the encode_video lines between two decode_video lines.
  std::ifstream in(log);
  std::string line;
  std::vector<double> wall;
  double current = -1, encodeCpuMs = 0;
  while (std::getline(in, line)) {
    const auto at = line.rfind("bench:");
    if (at == std::string::npos) continue;
    std::istringstream fields(line.substr(at + 6));
    double user = 0, sys = 0, real = 0;
    std::string u, s2, r, step;
    if (!(fields >> user >> u >> sys >> s2 >> real >> r >> step)) continue;
    if (step == "encode_video") {
      current = std::max(current, 0.0) + real / 1000.0;
      encodeCpuMs += (user + sys) / 1000.0;
    } else if (step == "decode_video" && current >= 0) {
      wall.push_back(current);
      current = -1;
    }
  }
  if (current >= 0) wall.push_back(current);
  const double cpu = (static_cast<double>(usage.ru_utime.tv_sec + usage.ru_stime.tv_sec) * 1e3 +
                      static_cast<double>(usage.ru_utime.tv_usec + usage.ru_stime.tv_usec) / 1e3) /
                     frames;
  std::ifstream size(out, std::ios::binary | std::ios::ate);
  const double kbit = static_cast<double>(size.tellg()) * 8 * cfg.fps / frames / 1000;
  const Summary s = summarize(wall);
  std::printf("  ffmpeg CLI     %3ux%-4u per frame: p50 %6.2f ms  p99 %6.2f ms  max %6.2f ms | CPU %6.2f ms/frame | %6.0f kb/s"
              " (process; encode step %.2f ms)\n",
              cfg.width, cfg.height, s.p50, s.p99, s.max, cpu, kbit, encodeCpuMs / frames);
}

// Ingest (dequeued) -> deliver() returned, for the data path serve chooses for `query`.
void dataPath(const std::string& query, int frames, StreamServer& server) {
  PipelineConfig config;
  config.source = parseSourceSpec("v4l2:" + std::string(std::getenv("ZEROHOP_CAMEMU_DEVICE")) + "?" + query);
  auto source = openSource(config.source);
  auto processor = makeFrameProcessor(config, *source, nullptr, choosePath(config.gpu, source->info().format));
  std::vector<double> wall;
  double cpu = 0;
  std::size_t bytes = 0;
  for (int got = 0; got < frames + 10;) {
    auto lease = source->next(std::chrono::milliseconds(2000));
    if (!lease) throw Error(Errc::kUnavailable, "the emulated camera sent no frame for 2 s");
    const std::int64_t ingest = lease->frame().times.at(Stage::kIngest);
    const double cpu0 = threadCpuMs();
    auto unit = processor->process(*lease);
    server.unnamedStream()->deliver(unit);
    const std::int64_t sent = monotonicNs();
    if (got++ < 10) continue;  // warm-up: the first IDR, the encoder's first frames
    cpu += threadCpuMs() - cpu0;
    wall.push_back(static_cast<double>(sent - ingest) / 1e6);
    if (unit) bytes += unit->bytes.size();
  }
  const Summary s = summarize(wall);
  std::printf("  %-48s ingest -> send p50 %6.3f ms  p99 %6.3f ms  max %6.3f ms | CPU %6.3f ms/frame | %5zu B/frame\n",
              processor->encoderName().substr(0, 48).c_str(), s.p50, s.p99, s.max, cpu / frames,
              bytes / static_cast<std::size_t>(frames));
}

int run(int argc, char** argv) {
  int frames = 300;
  std::string ffmpeg = "ffmpeg";
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--frames" && i + 1 < argc) {
      frames = std::max(20, std::atoi(argv[++i]));
    } else if (a == "--ffmpeg" && i + 1 < argc) {
      ffmpeg = argv[++i];
    } else {
      std::fprintf(stderr, "usage: %s [--frames N] [--ffmpeg PATH]\n", argv[0]);
      return 2;
    }
  }
  log::setLevel(log::Level::kWarn);
  const char* emulated = std::getenv("ZEROHOP_CAMEMU_DEVICE");
  if (!emulated) {
    std::printf("x264 per-frame encode, %d frames of the test camera at 30 fps (serve's settings vs ffmpeg CLI):\n",
                frames);
    for (const auto& [w, h] : {std::pair{1280u, 720u}, std::pair{1920u, 1080u}}) {
      const std::string raw = "/tmp/zerohop-encode-bench-" + std::to_string(::getpid()) + "-" + std::to_string(h) + ".yuv";
      const auto images = cameraFrames(w, h, frames, raw);
      const EncoderConfig cfg = serveEncoderConfig(w, h);
      ourX264(images, cfg);
      ffmpegX264(ffmpeg, raw, frames, cfg);
      std::remove(raw.c_str());
      std::remove((raw + ".ffmpeg.h264").c_str());
    }
    std::printf("(run under zerohop-camemu for the passthrough vs x264 data-path comparison)\n");
    return 0;
  }
  const char* size = std::getenv("ZEROHOP_CAMEMU_SIZE");
  const std::string sz = size ? size : "1280x720";
  std::printf("data paths from the emulated camera at %s@30, %d frames each, one thread, no viewer:\n", sz.c_str(),
              frames);
  StreamConfig sc;
  sc.port = 0;
  StreamServer server(sc);
  dataPath("format=h264&size=" + sz + "&fps=30", frames, server);
  dataPath("format=yuyv&size=" + sz + "&fps=30", frames, server);
  return 0;
}

}  // namespace
}  // namespace zerohop

int main(int argc, char** argv) {
  try {
    return zerohop::run(argc, argv);
  } catch (const zerohop::Error& e) {
    std::fprintf(stderr, "zerohop_encode_latency_bench: %s\n", e.what());
    return 1;
  }
}
