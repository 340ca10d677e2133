// zerohop_rendition_ladder_bench: the CPU a ladder of renditions costs on the CPU path (docs/ARCHITECTURE.md,
// "Renditions"), against the one encode: the same 720p30 camera frames (the test pattern, converted to I420,
// not timed) encoded by x264 at 1280x720 alone, and then with the default ladder's lower rungs beside it
// (libyuv box-scaled to 640x360 and 320x180, each its own x264 at its rung's top rate), as the encode
// thread runs them (RenditionEncodes: scale + encode after rung 0). Reports encode-thread CPU ms per frame
// and the ratio. Usage: zerohop_rendition_ladder_bench [FRAMES=300] [LOWER_PRESET=auto] [CODEC=x264] (the
// lower rungs' x264 preset; auto: as serve picks it; CODEC vp8: the VP8 ladder instead, libvpx as serve runs
// it for VP8 viewers, every rung VP8). Plain main.
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <memory>
#include <vector>

#include "convert/test_image.hpp"
#include "source/pattern_frames.hpp"
#include "stream/renditions.hpp"
#include "convert/converter.hpp"
#include "zerohop/encoder.hpp"

using namespace zerohop;
using zerohop::testing::TestImage;

namespace {

double threadCpuMs() {
  timespec t{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
  return static_cast<double>(t.tv_sec) * 1e3 + static_cast<double>(t.tv_nsec) / 1e6;
}

const char* gCodec = "x264";  // the encoder of every rung: "x264" or "vp8"

EncoderConfig x264(std::uint32_t width, std::uint32_t height, std::uint32_t kbps) {
  EncoderConfig c;  // serve's defaults: preset auto (superfast at 720p30), 1 thread, IDR every 120 frames
  c.encoder = gCodec;
  c.width = width;
  c.height = height;
  c.fps = 30;
  c.bitrateKbps = kbps;
  return c;
}

// Encode-thread CPU ms per frame over `frames` frames: rung 0, plus the lower rungs when `ladder`.
double run(int frames, bool ladder, const char* lowerPreset) {
  const std::uint32_t w = 1280, h = 720;
  const auto rungs = stream::renditionLadder("on", w, h, 2500);
  PatternFrames pattern(PixelFormat::kYUYV, w, h);
  TestImage yuyv(PixelFormat::kYUYV, w, h);
  TestImage i420(PixelFormat::kI420, w, h);
  auto converter = makeCpuConverter();
  auto scaler = makeCpuScaler();
  auto main = makeEncoder(x264(w, h, 2500));
  std::vector<std::unique_ptr<VideoEncoder>> lower;
  std::vector<std::unique_ptr<TestImage>> scaled;
  if (ladder) {
    for (std::size_t r = 1; r < rungs.size(); ++r) {
      EncoderConfig c = x264(rungs[r].width, rungs[r].height, rungs[r].maxKbps);
      c.preset = lowerPreset;
      lower.push_back(makeEncoder(c));
      scaled.push_back(std::make_unique<TestImage>(PixelFormat::kI420, rungs[r].width, rungs[r].height));
    }
  }
  double cpu = 0;
  std::size_t bytes = 0;
  for (int i = 0; i < frames; ++i) {
    const auto idx = static_cast<std::uint64_t>(i);
    pattern.render(yuyv.frame(), idx, Timecode{1'700'000'000'000ull + idx * 33, static_cast<std::uint32_t>(i)});
    converter->convert(yuyv.frame(), i420.frame());
    const double t0 = threadCpuMs();
    if (auto u = main->encode(i420.frame(), false)) bytes += u->bytes.size();
    for (std::size_t r = 0; r < lower.size(); ++r) {
      scaler->scale(i420.frame(), scaled[r]->frame());
      if (auto u = lower[r]->encode(scaled[r]->frame(), false)) bytes += u->bytes.size();
    }
    cpu += threadCpuMs() - t0;
  }
  std::printf("  %-28s CPU %6.2f ms/frame (%5.1f %% of a core at 30 fps), %6.0f kb/s in all\n",
              ladder ? "3-rung ladder (1/1,1/2,1/4)" : "one encode (1280x720)", cpu / frames, cpu / frames * 30 / 10,
              static_cast<double>(bytes) * 8 / 1000 / (frames / 30.0));
  return cpu / frames;
}

}  // namespace

int main(int argc, char** argv) {
  const int frames = argc > 1 ? std::atoi(argv[1]) : 300;
  const char* lowerPreset = argc > 2 ? argv[2] : "auto";
  if (argc > 3) gCodec = argv[3];
  std::printf("zerohop_rendition_ladder_bench: %d frames of the 720p30 test pattern, %s (serve's settings)\n",
              frames, gCodec);
  const double one = run(frames, false, lowerPreset);
  const double ladder = run(frames, true, lowerPreset);
  std::printf("ladder / one encode: %.2fx CPU (lower rungs' preset %s)\n", ladder / one, lowerPreset);
  return 0;
}
