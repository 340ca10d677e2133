// Publisher process for the Python tests (tests/share/share_peer covers plain NV12 pattern images):
//   images NAME DIR SLOTS    I420 96x48 pattern frames (tests/share/share_test_support.hpp's pattern)
//   encoded NAME DIR SLOTS   encoded units: unitSize/unitKeyframe/patternByte of the sequence,
//                            StageTimes encode = sequence * 1000
// Prints "ready" once the share exists, then waits for a line "go" on stdin before publishing one
// frame per millisecond until killed (so a test can see a ring with nothing published yet).
// Exit status: 2 zerohop::Error, 3 usage.
#include <chrono>
#include <iostream>
#include <string>
#include <thread>
#include <vector>

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

}  // namespace

int main(int argc, char** argv) {
  log::setLevel(log::Level::kWarn);
  const std::vector<std::string> args(argv + 1, argv + argc);
  if (args.size() != 4 || (args[0] != "images" && args[0] != "encoded")) {
    std::cerr << "usage: " << argv[0] << " images|encoded NAME DIR SLOTS\n";
    return 3;
  }
  try {
    const auto slots = static_cast<std::uint32_t>(std::stoul(args[3]));
    if (args[0] == "images") publishImages(args[1], args[2], slots);
    publishEncoded(args[1], args[2], slots);
  } catch (const Error& e) {
    std::cout << "error " << errcName(e.code()) << ": " << e.what() << std::endl;
    return 2;
  }
}
