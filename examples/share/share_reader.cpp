#include <cstdio>
#include "zerohop/clock.hpp"
#include "zerohop/share.hpp"
using namespace std::chrono_literals;

int main() {
  zerohop::Subscriber sub("cam0");               // connect, handshake, map the ring read-only
  for (int n = 0; n < 300;) {
    auto f = sub.next(2s);                       // a lease on the next frame (nullopt on timeout)
    if (!f) continue;
    const zerohop::Frame& frame = f->frame();    // format, planes, pitches, sequence, StageTimes
    const std::uint8_t first = frame.data[0][0]; // read the pixels in place...
    if (!f->valid()) continue;                   // ...then make sure they were not overwritten
    std::printf("seq %llu first %u, %.1f us after publish\n",
                (unsigned long long)frame.sequence, first,
                (zerohop::monotonicNs() - f->publishNs()) / 1e3);
    ++n;
  }                                              // each SharedFrame gives its slot back here
}
