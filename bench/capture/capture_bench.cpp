// zerohop-capture-bench: CPU cost per frame of our V4L2 capture (poll, DQBUF into a lease, QBUF
// when the lease is released) and of the CPU MJPEG decode, measured on the capture thread with
// CLOCK_THREAD_CPUTIME_ID so a camera emulator running in other threads of the same process is not
// counted as ours; the rest of the process's CPU time is reported separately as the emulator's.
//
// usage (one command line): zerohop-camemu --format mjpeg --size 1920x1080 --fps 30 --
//          zerohop-capture-bench --source "v4l2:/dev/video0?format=mjpeg&size=1920x1080&fps=30&memory=userptr" --frames 300
#include <time.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "convert/converter.hpp"
#include "core/latency_stats.hpp"
#include "zerohop/buffer_pool.hpp"
#include "zerohop/capture.hpp"
#include "zerohop/error.hpp"
#include "zerohop/source.hpp"

namespace {

double cpuMs(clockid_t clock) {
  timespec ts{};
  clock_gettime(clock, &ts);
  return static_cast<double>(ts.tv_sec) * 1e3 + static_cast<double>(ts.tv_nsec) / 1e6;
}

}  // namespace

int main(int argc, char** argv) {
  std::string spec = "v4l2:/dev/video0";
  int frames = 300;
  for (int i = 1; i + 1 < argc; i += 2) {
    if (!std::strcmp(argv[i], "--source")) spec = argv[i + 1];
    else if (!std::strcmp(argv[i], "--frames")) frames = std::max(10, std::atoi(argv[i + 1]));
  }
  try {
    auto source = zerohop::openV4l2Source(zerohop::parseSourceSpec(spec), {});
    const auto info = source->info();
    auto converter = zerohop::makeCpuConverter();
    zerohop::BufferPool out(zerohop::computeLayout(zerohop::PixelFormat::kI420, info.width, info.height, 64), 1,
                            zerohop::makeHostAllocator());
    std::vector<double> capture, decode;
    const double process0 = cpuMs(CLOCK_PROCESS_CPUTIME_ID);
    double ours = 0;
    for (int n = 0; n < frames + 10;) {
      const double t0 = cpuMs(CLOCK_THREAD_CPUTIME_ID);
      auto lease = source->next(std::chrono::milliseconds(1000));
      const double t1 = cpuMs(CLOCK_THREAD_CPUTIME_ID);
      if (!lease) continue;
      double dec = 0;
      if (zerohop::isCompressed(info.format) || info.format != zerohop::PixelFormat::kI420) {
        auto dst = out.tryAcquire();
        converter->convert(lease->frame(), dst->frame());
        dec = cpuMs(CLOCK_THREAD_CPUTIME_ID) - t1;
      }
      const double t2 = cpuMs(CLOCK_THREAD_CPUTIME_ID);
      lease->reset();  // QBUF
      const double t3 = cpuMs(CLOCK_THREAD_CPUTIME_ID);
      if (n++ < 10) continue;  // warm-up
      capture.push_back((t1 - t0) + (t3 - t2));
      decode.push_back(dec);
      ours += (t3 - t0);
    }
    const double process = cpuMs(CLOCK_PROCESS_CPUTIME_ID) - process0;
    const auto c = zerohop::percentiles(capture);
    const auto d = zerohop::percentiles(decode);
    std::printf("source: %s, %d frames\n", info.description.c_str(), frames);
    std::printf("| per frame, CPU | p50 | p99 |\n|---|---|---|\n");
    std::printf("| capture: poll + DQBUF + lease + QBUF (ours) | %.3f ms | %.3f ms |\n", c.p50Ms, c.p99Ms);
    std::printf("| convert/decode to I420 (%s) | %.3f ms | %.3f ms |\n", converter->name(), d.p50Ms, d.p99Ms);
    std::printf("emulator and other threads (not ours): %.3f ms of CPU per frame\n",
                (process - ours) / static_cast<double>(frames));
    return 0;
  } catch (const zerohop::Error& e) {
    std::fprintf(stderr, "zerohop-capture-bench: %s\n", e.what());
    return 1;
  }
}
