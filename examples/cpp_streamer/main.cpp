// Streams frames this program draws (a moving gradient with zerohop's pixel timecode) to browsers:
//   cpp_streamer [--listen HOST:PORT] [--size WxH] [--fps N]      then open the printed URL; Ctrl-C stops
#include <zerohop/clock.hpp>
#include <zerohop/error.hpp>
#include <zerohop/frame_stream.hpp>
#include <zerohop/timecode.hpp>

#include <csignal>
#include <cstdio>
#include <cstring>
#include <string>
#include <thread>

namespace {
volatile std::sig_atomic_t stop = 0;
}

int main(int argc, char** argv) try {
  zerohop::FrameStreamConfig config;  // NV12 1280x720@30 in host memory, WHEP on 127.0.0.1:8080
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string opt = argv[i], value = argv[i + 1];
    if (opt == "--listen") {
      config.stream.host = value.substr(0, value.rfind(':'));
      config.stream.port = static_cast<std::uint16_t>(std::stoi(value.substr(value.rfind(':') + 1)));
    } else if (opt == "--size") {
      config.width = std::stoul(value);
      config.height = std::stoul(value.substr(value.find('x') + 1));
    } else if (opt == "--fps") {
      config.fps = std::stod(value);
    }
  }
  zerohop::FrameStream stream(config);
  std::printf("streaming %ux%u@%g: open %s\n", config.width, config.height, config.fps, stream.url().c_str());
  std::fflush(stdout);
  std::signal(SIGINT, [](int) { stop = 1; });
  std::signal(SIGTERM, [](int) { stop = 1; });

  const auto period = std::chrono::nanoseconds(static_cast<std::int64_t>(1e9 / config.fps));
  auto due = std::chrono::steady_clock::now();
  for (std::uint64_t n = 1; !stop; ++n) {
    zerohop::InputSlot slot = stream.input().acquireWrite();  // a slot of the input pool, written in place
    zerohop::Frame& f = slot.frame();
    for (std::uint32_t y = 0; y < f.height; ++y)  // your renderer, camera or decoder writes here
      for (std::uint32_t x = 0; x < f.width; ++x) f.data[0][y * f.pitch[0] + x] = static_cast<std::uint8_t>(x + y + 4 * n);
    for (std::uint32_t y = 0; y < f.height / 2; ++y) std::memset(f.data[1] + y * f.pitch[1], 128, f.width);
    f.sequence = n;
    f.wallClockMs = zerohop::realtimeNs() / 1'000'000;
    f.times.mark(zerohop::Stage::kCapture, zerohop::monotonicNs());
    zerohop::drawTimecode(f, {static_cast<std::uint64_t>(f.wallClockMs), static_cast<std::uint32_t>(n)});
    stream.input().commit(std::move(slot), f);  // the encoder picks it up; never waits for it
    due += period;
    std::this_thread::sleep_until(due);
    if (n % static_cast<std::uint64_t>(config.fps * 10) == 0) {
      const auto s = stream.status();
      std::printf("%.1f fps, capture->sent p50 %.2f ms, %zu viewers\n", s.latency.fps, s.latency.total.p50Ms, s.viewers);
      std::fflush(stdout);
    }
  }
  return 0;
} catch (const zerohop::Error& e) {
  std::fprintf(stderr, "cpp_streamer: %s\n", e.what());
  return 1;
}
