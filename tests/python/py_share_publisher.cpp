// Publisher process for the Python tests (tests/share/share_peer covers plain NV12 pattern images):
//   images NAME DIR SLOTS    I420 96x48 pattern frames (tests/share/share_test_support.hpp's pattern)
//   encoded NAME DIR SLOTS   encoded units: unitSize/unitKeyframe/patternByte of the sequence,
//                            StageTimes encode = sequence * 1000
//   opus NAME DIR SLOTS      (where built with zerohop::audio) one second of a 440 Hz tone through serve's
//                            Opus encode: packets 0..49 of 20 ms, sequence = packet number, packet 25
//                            never published (a reader conceals it), one every 2 ms, then idles
// Prints "ready" once the share exists, then waits for a line "go" on stdin before publishing one
// frame per millisecond until killed (so a test can see a ring with nothing published yet).
// Exit status: 2 zerohop::Error, 3 usage.
#include <chrono>
#include <iostream>
#include <string>
#include <thread>
#include <vector>

#ifdef ZEROHOP_PY_PUBLISHER_OPUS
#include "tone_packets.hpp"
#endif
#include "share_test_support.hpp"
#include "zerohop/error.hpp"
#include "zerohop/log.hpp"
#include "zerohop/share.hpp"

using namespace zerohop;
using namespace zerohop::share_test;
using namespace std::chrono_literals;

namespace {

void awaitGo() {
  std::cout << "ready" << std::endl;
  std::string line;
  while (std::getline(std::cin, line) && line != "go") {
  }
}

[[noreturn]] void publishImages(const std::string& name, const std::string& dir, std::uint32_t slots) {
  const ImageLayout layout = computeLayout(PixelFormat::kI420, 96, 48, 64);
  ShareOptions o;
  o.directory = dir;
  Publisher pub(name, SlotLayout::images(layout, slots), o);
  std::vector<std::uint8_t> storage(layout.totalBytes);
  Frame f;
  bindLayout(f, layout, storage.data(), MemoryKind::kHost);
  awaitGo();
  for (std::uint64_t seq = 1;; ++seq) {
    f.sequence = seq;
    f.wallClockMs = static_cast<std::int64_t>(seq);
    f.times.mark(Stage::kCapture, static_cast<std::int64_t>(seq) * 1000);
    fillPattern(f, layout);
    pub.publish(f);
    std::this_thread::sleep_for(1ms);
  }
}

[[noreturn]] void publishEncoded(const std::string& name, const std::string& dir, std::uint32_t slots) {
  ShareOptions o;
  o.directory = dir;
  Publisher pub(name, SlotLayout::encoded(PixelFormat::kH264, 8192, slots), o);
  awaitGo();
  for (std::uint64_t seq = 1;; ++seq) {
    EncodedUnit u;
    u.width = 96;
    u.height = 48;
    u.sequence = seq;
    u.keyframe = unitKeyframe(seq);
    u.wallClockMs = static_cast<std::int64_t>(seq);
    u.times.mark(Stage::kEncode, static_cast<std::int64_t>(seq) * 1000);
    u.bytes.resize(unitSize(seq));
    for (std::size_t i = 0; i < u.bytes.size(); ++i) u.bytes[i] = patternByte(seq, 0, i);
    pub.publish(u);
    std::this_thread::sleep_for(1ms);
  }
}

#ifdef ZEROHOP_PY_PUBLISHER_OPUS
[[noreturn]] void publishOpus(const std::string& name, const std::string& dir, std::uint32_t slots) {
  ShareOptions o;
  o.directory = dir;
  Publisher pub(name, SlotLayout::encoded(PixelFormat::kOpus, 1500, slots), o);
  const std::vector<audio::OpusPacket> packets = audio::tonePackets(1, 50);
  awaitGo();
  for (std::size_t i = 0; i < packets.size(); ++i) {
    if (i == 25) continue;
    EncodedUnit u;
    u.codec = Codec::kOpus;
    u.sequence = i;
    u.keyframe = true;
    u.times.mark(Stage::kCapture, packets[i].captureNs);
    u.bytes = packets[i].data;
    pub.publish(u);
    std::this_thread::sleep_for(2ms);
  }
  for (;;) std::this_thread::sleep_for(1s);
}
#endif

}  // namespace

int main(int argc, char** argv) {
  log::setLevel(log::Level::kWarn);
  const std::vector<std::string> args(argv + 1, argv + argc);
  if (args.size() != 4 || (args[0] != "images" && args[0] != "encoded" && args[0] != "opus")) {
    std::cerr << "usage: " << argv[0] << " images|encoded|opus NAME DIR SLOTS\n";
    return 3;
  }
  try {
    const auto slots = static_cast<std::uint32_t>(std::stoul(args[3]));
    if (args[0] == "images") publishImages(args[1], args[2], slots);
    if (args[0] == "opus") {
#ifdef ZEROHOP_PY_PUBLISHER_OPUS
      publishOpus(args[1], args[2], slots);
#else
      std::cout << "error unsupported: built without zerohop::audio" << std::endl;
      return 2;
#endif
    }
    publishEncoded(args[1], args[2], slots);
  } catch (const Error& e) {
    std::cout << "error " << errcName(e.code()) << ": " << e.what() << std::endl;
    return 2;
  }
}
