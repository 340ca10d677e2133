// Per-frame cost of the CPU path with the pipeline's settings, on the test camera's picture
// (textured, noisy, moving: what a real camera costs an encoder):
//   Convert/<src>/<height>      YUYV -> I420 or NV12 (libyuv)
//   MjpegDecode/<subsamp>/<h>   camera-like q85 JPEG -> I420 (libjpeg-turbo + libyuv)
//   Encode/<height>/<preset>    x264 encode of one I420 frame (tune zerolatency, CBR, 1 thread)
//   ConvertEncode/<height>      YUYV -> I420 -> x264, the CPU pipeline's per-frame work
//   EncodeAtRate/<height>/<fps>/<preset>/<threads>
//                               x264 configured for that frame rate (one-frame VBV of bitrate / fps) with
//                               1 or 2 sliced threads: wall time per frame is the encode latency, CPU
//                               time the whole process's (every x264 thread)
// Each iteration renders the next camera frame outside the timed region, so motion is continuous.
// CPU time per frame / 33.3 ms = share of one core at 30 frames/s.
#include <benchmark/benchmark.h>
#include <turbojpeg.h>

extern "C" {
#include <libavutil/log.h>
}

#include <string>

#include "convert/jpeg_fixture.hpp"
#include "convert/test_image.hpp"
#include "source/pattern_frames.hpp"
#include "convert/converter.hpp"
#include "zerohop/encoder.hpp"
#include "zerohop/log.hpp"

namespace zerohop {
namespace {

using testing::TestImage;

struct Size {
  std::uint32_t width, height, kbps;
};
Size sizeFor(std::int64_t height) {
  return height >= 1080 ? Size{1920, 1080, 5000} : Size{1280, 720, 2500};
}

const char* kPresets[] = {"superfast", "veryfast", "ultrafast", "faster"};  // default first

/// Renders consecutive camera frames into one YUYV image.
class Camera {
 public:
  explicit Camera(const Size& s)
      : pattern_(PixelFormat::kYUYV, s.width, s.height), yuyv_(PixelFormat::kYUYV, s.width, s.height) {}
  const Frame& next() {
    pattern_.render(yuyv_.frame(), index_,
                    Timecode{1'700'000'000'000ull + index_ * 33, static_cast<std::uint32_t>(index_)});
    yuyv_.frame().sequence = index_++;
    return yuyv_.frame();
  }

 private:
  PatternFrames pattern_;
  TestImage yuyv_;
  std::uint64_t index_ = 0;
};

void Convert(benchmark::State& state) {
  const Size s = sizeFor(state.range(1));
  const PixelFormat dstFormat = state.range(0) == 0 ? PixelFormat::kI420 : PixelFormat::kNV12;
  Camera camera(s);
  TestImage dst(dstFormat, s.width, s.height);
  auto converter = makeCpuConverter();
  for (auto _ : state) {
    state.PauseTiming();
    const Frame& src = camera.next();
    state.ResumeTiming();
    converter->convert(src, dst.frame());
    benchmark::DoNotOptimize(dst.frame().data[0][0]);
  }
  state.SetLabel(std::string("yuyv->") + std::string(formatName(dstFormat)));
}
BENCHMARK(Convert)->ArgsProduct({{0, 1}, {720, 1080}})->Unit(benchmark::kMillisecond);

void MjpegDecode(benchmark::State& state) {
  const Size s = sizeFor(state.range(1));
  const int subsamp = state.range(0) == 422 ? TJSAMP_422 : TJSAMP_420;
  // A few different frames so the decoder does not see one image over and over.
  std::vector<TestImage> jpegs;
  for (std::uint64_t i = 0; i < 8; ++i) {
    jpegs.push_back(TestImage::compressed(
        PixelFormat::kMJPEG, s.width, s.height,
        testing::compressJpeg(testing::cameraPlanes(s.width, s.height, i * 7), subsamp)));
  }
  TestImage dst(PixelFormat::kI420, s.width, s.height);
  auto converter = makeCpuConverter();
  std::size_t i = 0, bytes = 0;
  for (auto _ : state) {
    const Frame& src = jpegs[i++ % jpegs.size()].frame();
    bytes += src.bytesUsed;
    converter->convert(src, dst.frame());
  }
  state.SetLabel("q85 " + std::to_string(state.range(0)) + ", avg " +
                 std::to_string(bytes / std::max<std::size_t>(1, i) / 1024) + " KiB");
}
BENCHMARK(MjpegDecode)->ArgsProduct({{422, 420}, {720, 1080}})->Unit(benchmark::kMillisecond);

// Encodes consecutive camera frames with `cfg` (rendered and converted outside the timed region) for as
// long as the benchmark runs; reports the bitrate at cfg.fps.
void runEncode(benchmark::State& state, const EncoderConfig& cfg) {
  Camera camera(Size{cfg.width, cfg.height, cfg.bitrateKbps});
  TestImage i420(PixelFormat::kI420, cfg.width, cfg.height);
  auto converter = makeCpuConverter();
  auto encoder = makeEncoder(cfg);
  std::size_t bytes = 0;
  for (auto _ : state) {
    state.PauseTiming();
    converter->convert(camera.next(), i420.frame());
    state.ResumeTiming();
    auto unit = encoder->encode(i420.frame(), false);
    bytes += unit ? unit->bytes.size() : 0;
  }
  state.counters["kbps"] =
      benchmark::Counter(static_cast<double>(bytes) * 8 * cfg.fps / 1000, benchmark::Counter::kAvgIterations);
  state.SetLabel(cfg.preset + ", CBR " + std::to_string(cfg.bitrateKbps) + " kb/s, " + std::to_string(cfg.threads) +
                 " thread(s)");
}

EncoderConfig encodeConfig(const Size& s, const char* preset) {
  EncoderConfig cfg;
  cfg.width = s.width;
  cfg.height = s.height;
  cfg.bitrateKbps = s.kbps;
  cfg.preset = preset;
  return cfg;
}

void Encode(benchmark::State& state) {
  runEncode(state, encodeConfig(sizeFor(state.range(0)), kPresets[state.range(1)]));
}
BENCHMARK(Encode)->ArgsProduct({{720, 1080}, {0, 1, 2, 3}})->Unit(benchmark::kMillisecond)->MinTime(3.0);

void EncodeAtRate(benchmark::State& state) {
  EncoderConfig cfg = encodeConfig(sizeFor(state.range(0)), kPresets[state.range(2)]);
  cfg.fps = static_cast<double>(state.range(1));
  cfg.threads = static_cast<int>(state.range(3));
  runEncode(state, cfg);
}
BENCHMARK(EncodeAtRate)
    ->ArgsProduct({{720, 1080}, {60}, {0, 1, 2}, {1, 2}})
    ->Unit(benchmark::kMillisecond)
    ->MinTime(2.0)
    ->UseRealTime()
    ->MeasureProcessCPUTime();

void ConvertEncode(benchmark::State& state) {
  const Size s = sizeFor(state.range(0));
  Camera camera(s);
  TestImage i420(PixelFormat::kI420, s.width, s.height);
  auto converter = makeCpuConverter();
  EncoderConfig cfg;
  cfg.width = s.width;
  cfg.height = s.height;
  cfg.bitrateKbps = s.kbps;
  auto encoder = makeEncoder(cfg);
  for (auto _ : state) {
    state.PauseTiming();
    const Frame& src = camera.next();
    state.ResumeTiming();
    converter->convert(src, i420.frame());
    benchmark::DoNotOptimize(encoder->encode(i420.frame(), false));
  }
  state.SetLabel(encoder->name());
}
BENCHMARK(ConvertEncode)->Arg(720)->Arg(1080)->Unit(benchmark::kMillisecond)->MinTime(3.0);

}  // namespace
}  // namespace zerohop

int main(int argc, char** argv) {
  zerohop::log::setLevel(
      zerohop::log::Level::kWarn);  // one info line per encoder opened would bury the table
  av_log_set_level(AV_LOG_ERROR);
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
