// What the C API adds per frame over the C++ API: next() + release of a frame already published, on a
// host share in this process, C (zh_reader_next + zh_frame_get_info + zh_frame_release) and C++
// (Subscriber::next + SharedFrame destruction) interleaved in rounds so both see the same machine.
//   zerohop_capi_bench [--frames N] [--rounds R]
// Prints p50/p99 ns per frame for each and their difference.
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "zerohop/clock.hpp"
#include "zerohop/log.hpp"
#include "zerohop/share.hpp"
#include "zerohop/zerohop.h"

using namespace zerohop;

namespace {

double pct(std::vector<std::int64_t>& v, double q) {
  std::sort(v.begin(), v.end());
  return static_cast<double>(v[static_cast<std::size_t>(q * (v.size() - 1))]);
}

}  // namespace

int main(int argc, char** argv) {
  int frames = 20000, rounds = 5;
  for (int i = 1; i + 1 < argc; i += 2) {
    if (!std::strcmp(argv[i], "--frames")) frames = std::atoi(argv[i + 1]);
    if (!std::strcmp(argv[i], "--rounds")) rounds = std::atoi(argv[i + 1]);
  }
  log::setLevel(log::Level::kWarn);
  char tmpl[] = "/tmp/zh-capi-bench-XXXXXX";
  if (!::mkdtemp(tmpl)) return 1;
  ShareOptions so;
  so.directory = tmpl;
  const auto layout = computeLayout(PixelFormat::kNV12, 1920, 1080, 64);
  Publisher pub("bench", SlotLayout::images(layout, 8), so);
  WriteSlot first = pub.acquireWrite();
  Frame meta = first.frame();
  pub.commit(std::move(first), meta);

  SubscribeOptions cxxOptions;
  cxxOptions.directory = tmpl;
  Subscriber cxx("bench", cxxOptions);
  zh_reader_options co = ZH_READER_OPTIONS_INIT;
  co.directory = tmpl;
  zh_reader* c = nullptr;
  if (zh_reader_open_with("bench", &co, &c) != ZH_OK) {
    std::fprintf(stderr, "%s\n", zh_last_error());
    return 1;
  }
  std::vector<std::int64_t> tc, tcxx;
  tc.reserve(std::size_t(frames) * rounds);
  tcxx.reserve(std::size_t(frames) * rounds);
  std::uint64_t sum = 0;
  for (int r = 0; r < rounds; ++r) {
    for (int pass = 0; pass < 2; ++pass) {
      for (int i = 0; i < frames; ++i) {
        WriteSlot s = pub.acquireWrite();  // a fresh frame for the next() below (not timed)
        Frame m = s.frame();
        m.sequence = static_cast<std::uint64_t>(i);
        pub.commit(std::move(s), m);
        const std::int64_t t0 = monotonicNs();
        if (pass == 0) {
          zh_frame* f = nullptr;
          if (zh_reader_next(c, 1000, &f) != ZH_OK) return 2;
          zh_frame_info info = ZH_FRAME_INFO_INIT;
          zh_frame_get_info(f, &info);
          sum += static_cast<const std::uint8_t*>(info.planes[0])[0];
          zh_frame_release(f);
          tc.push_back(monotonicNs() - t0);
        } else {
          auto f = cxx.next(std::chrono::milliseconds(1000));
          if (!f) return 2;
          sum += f->frame().data[0][0];
          f.reset();
          tcxx.push_back(monotonicNs() - t0);
        }
      }
    }
  }
  zh_reader_close(c);
  const double c50 = pct(tc, 0.5), c99 = pct(tc, 0.99), x50 = pct(tcxx, 0.5), x99 = pct(tcxx, 0.99);
  std::printf("next + release of a published 1080p NV12 frame, host share, %d frames x %d rounds each\n", frames, rounds);
  std::printf("| API | p50 ns | p99 ns |\n|---|---|---|\n");
  std::printf("| C++ (Subscriber::next, ~SharedFrame) | %.0f | %.0f |\n", x50, x99);
  std::printf("| C (zh_reader_next, zh_frame_get_info, zh_frame_release) | %.0f | %.0f |\n", c50, c99);
  std::printf("| C API adds | %+.0f | %+.0f |\n", c50 - x50, c99 - x99);
  std::string rm = std::string("rm -rf ") + tmpl;
  (void)std::system(rm.c_str());
  return sum == 12345678 ? 3 : 0;  // keep the reads
}
