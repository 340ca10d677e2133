// Reads COUNT frames of share NAME in place: cpp_reader NAME [COUNT]
#include <zerohop/clock.hpp>
#include <zerohop/error.hpp>
#include <zerohop/share.hpp>
#include <zerohop/timecode.hpp>

#include <cstdio>
#include <cstdlib>
#include <optional>

using namespace std::chrono_literals;

int main(int argc, char** argv) try {
  if (argc < 2) {
    std::fprintf(stderr, "usage: %s NAME [COUNT]\n", argv[0]);
    return 2;
  }
  const int count = argc > 2 ? std::atoi(argv[2]) : 60;
  zerohop::Subscriber sub(argv[1]);  // connect, handshake, map the ring read-only
  std::optional<std::uint64_t> last;
  int bad = 0;
  for (int n = 0; n < count; ++n) {
    auto f = sub.next(2s);  // a lease on the next frame
    if (!f) {
      std::fprintf(stderr, "no frame within 2 s\n");
      return 1;
    }
    const zerohop::Frame& frame = f->frame();
    const auto tc = zerohop::readTimecode(frame);  // read the pixels in place...
    const bool intact = f->valid();                // ...then make sure they were not overwritten
    std::printf("seq %llu %ux%u, %.2f ms after capture, timecode %s%s\n", (unsigned long long)frame.sequence,
                frame.width, frame.height, (zerohop::monotonicNs() - frame.captureNs()) / 1e6,
                tc ? "ok" : "none", intact ? "" : " OVERWRITTEN");
    if ((last && frame.sequence <= *last) || !intact) ++bad;  // sequences rise
    last = frame.sequence;
  }  // each SharedFrame gives its slot back as it goes
  return bad ? 3 : 0;
} catch (const zerohop::Error& e) {
  std::fprintf(stderr, "%s: %s\n", zerohop::errcName(e.code()), e.what());
  return 1;
}
