// The share ring in two small programs (docs/share-protocol.md shows the reader part):
//   zerohop_share_example publish NAME [FRAMES]  publishes FRAMES (300) NV12 640x480 frames at ~30 fps
//   zerohop_share_example read NAME [FRAMES]     prints sequence, first pixel and publish->read latency
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "zerohop/clock.hpp"
#include "zerohop/error.hpp"
#include "zerohop/share.hpp"

using namespace std::chrono_literals;

static int publish(const std::string& name, int frames) {
  const zerohop::ImageLayout layout = zerohop::computeLayout(zerohop::PixelFormat::kNV12, 640, 480);
  zerohop::Publisher pub(name, zerohop::SlotLayout::images(layout, 4));
  for (int i = 1; i <= frames; ++i) {
    zerohop::WriteSlot slot = pub.acquireWrite();  // write in place: no staging copy
    zerohop::Frame& f = slot.frame();
    for (std::uint32_t r = 0; r < layout.planes[0].rows; ++r) {
      std::fill_n(f.data[0] + std::size_t{r} * f.pitch[0], layout.planes[0].widthBytes,
                  static_cast<std::uint8_t>(i + r));
    }
    zerohop::Frame meta;
    meta.sequence = static_cast<std::uint64_t>(i);
    meta.times.mark(zerohop::Stage::kCapture, zerohop::monotonicNs());
    pub.commit(std::move(slot), meta);
    std::this_thread::sleep_for(33ms);
  }
  const auto s = pub.stats();
  std::printf("published %llu frames, %u readers connected, %llu overruns\n",
              static_cast<unsigned long long>(s.publishes), s.readersConnected,
              static_cast<unsigned long long>(s.overruns));
  return 0;
}

static int read(const std::string& name, int frames) {
  zerohop::Subscriber sub(name);  // connects, handshakes, maps the ring read-only
  for (int n = 0; n < frames;) {
    std::optional<zerohop::SharedFrame> f = sub.next(2s);  // a lease: the slot is spared while we hold it
    if (!f) continue;                                      // nothing new within 2 s
    const zerohop::Frame& frame = f->frame();
    const std::uint8_t firstPixel = frame.data[0][0];  // read the pixels in place ...
    if (!f->valid()) continue;                         // ... then check they were not overwritten
    std::printf("seq %llu %ux%u %s first pixel %u, %.1f us after publish\n",
                static_cast<unsigned long long>(frame.sequence), frame.width, frame.height,
                std::string(zerohop::formatName(frame.format)).c_str(), firstPixel,
                (zerohop::monotonicNs() - f->publishNs()) / 1e3);
    ++n;
  }
  const auto s = sub.stats();
  std::printf("%llu frames, %llu missed, %llu overruns\n", static_cast<unsigned long long>(s.frames),
              static_cast<unsigned long long>(s.missed), static_cast<unsigned long long>(s.overruns));
  return 0;
}

int main(int argc, char** argv) {
  if (argc < 3) {
    std::fprintf(stderr, "usage: %s publish|read NAME [FRAMES]\n", argv[0]);
    return 2;
  }
  const std::string mode = argv[1], name = argv[2];
  const int frames = argc > 3 ? std::stoi(argv[3]) : 300;
  try {
    return mode == "publish" ? publish(name, frames) : read(name, frames);
  } catch (const zerohop::Error& e) {
    std::fprintf(stderr, "%s: %s\n", zerohop::errcName(e.code()), e.what());
    return 1;
  }
}
