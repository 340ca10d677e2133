// zerohop-camemu-check FILE FORMAT WIDTH HEIGHT MIN_FRAMES
// Reads back raw frames a third-party client (v4l2-ctl --stream-to, ffmpeg -f rawvideo, GStreamer
// filesink) captured from the emulated camera, and checks every frame carries a valid timecode with
// strictly increasing sequence numbers. Exit 0 if so, 1 with the reason otherwise.
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <string>
#include <vector>

#include "zerohop/timecode.hpp"

int main(int argc, char** argv) {
  using namespace zerohop;
  if (argc != 6) {
    std::fprintf(stderr, "usage: %s FILE yuyv|uyvy|nv12 WIDTH HEIGHT MIN_FRAMES\n", argv[0]);
    return 2;
  }
  const auto format = parseFormat(argv[2]);
  const auto width = static_cast<std::uint32_t>(std::atoi(argv[3]));
  const auto height = static_cast<std::uint32_t>(std::atoi(argv[4]));
  const int minFrames = std::atoi(argv[5]);
  if (!format) return 2;
  const ImageLayout layout = computeLayout(*format, width, height);
  std::ifstream in(argv[1], std::ios::binary);
  std::vector<std::uint8_t> buf(layout.totalBytes);
  int frames = 0;
  long long lastSeq = -1;
  while (in.read(reinterpret_cast<char*>(buf.data()), static_cast<std::streamsize>(buf.size()))) {
    Frame f;
    bindLayout(f, layout, buf.data(), MemoryKind::kHost);
    const auto tc = readTimecode(f);
    if (!tc) {
      std::fprintf(stderr, "frame %d: no valid timecode\n", frames);
      return 1;
    }
    if (static_cast<long long>(tc->sequence) <= lastSeq) {
      std::fprintf(stderr, "frame %d: sequence %u after %lld\n", frames, tc->sequence, lastSeq);
      return 1;
    }
    lastSeq = tc->sequence;
    ++frames;
  }
  if (in.gcount() != 0) {
    std::fprintf(stderr, "trailing partial frame of %lld bytes (frame size %zu)\n",
                 static_cast<long long>(in.gcount()), layout.totalBytes);
    return 1;
  }
  if (frames < minFrames) {
    std::fprintf(stderr, "only %d frames, expected at least %d\n", frames, minFrames);
    return 1;
  }
  std::printf("%d frames, timecodes valid, sequences increasing\n", frames);
  return 0;
}
