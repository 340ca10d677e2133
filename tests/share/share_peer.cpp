// Helper process for the share ipc tests: a publisher or a reader in a process of its own.
//   [--as-uid U] publish NAME DIR SLOTS      prints "ready", publishes pattern frames until killed
//   publish-paced NAME DIR SLOTS FPS COUNT   prints "ready", waits (10 s at most) for a reader, publishes
//                                            COUNT pattern frames at FPS, prints "done", waits to be killed
//   [--as-uid U] read NAME DIR COUNT [MAXINV] verifies COUNT frames (content + rising sequence);
//                                            gives up after MAXINV (default COUNT) overwritten ones
//   read-encoded NAME DIR COUNT              the same for encoded units
//   hold NAME DIR                            leases a frame, prints "leased SEQ"; on "check" says
//                                            "still-valid" or "invalid"; then waits to be killed
//   [--as-uid U] connect NAME DIR [PUB_UID]  prints "connected" or "error <errc>: <message>"
//   publish-device-vmm NAME DIR SLOTS        with --fake-device: prints "ready", publishes pattern frames
//                                            into a device ring exported as a VMM fd until killed
//   ring-memory NAME DIR                     reads a frame's DeviceRingMemory, maps its fd and says
//                                            "ring-memory stride=S offset=O same-bytes=1|0 valid=1|0"
//                                            or "no-ring-memory"
//   --fake-device <any of the above>         registers the host-memory fake device transport first
//                                            (without it this peer is a reader built without CUDA)
// Exit status: 0 success, 1 verification failure, 2 zerohop::Error, 3 usage.
#include <grp.h>
#include <sys/mman.h>
#include <unistd.h>

#include <chrono>
#include <cstring>
#include <cstdio>
#include <iostream>
#include <optional>
#include <string>
#include <thread>

#include "fake_device_transport.hpp"
#include "share_test_support.hpp"
#include "zerohop/error.hpp"
#include "zerohop/log.hpp"
#include "zerohop/share.hpp"

using namespace zerohop;
using namespace zerohop::share_test;
using namespace std::chrono_literals;

namespace {

void say(const std::string& line) {
  std::cout << line << std::endl;  // endl flushes: the test reads line by line
}

int publish(const std::string& name, const std::string& dir, std::uint32_t slots) {
  const ImageLayout layout = testLayout();
  ShareOptions o;
  o.directory = dir;
  Publisher pub(name, SlotLayout::images(layout, slots), o);
  std::vector<std::uint8_t> storage(layout.totalBytes);
  Frame f;
  bindLayout(f, layout, storage.data(), MemoryKind::kHost);
  say("ready");
  for (std::uint64_t seq = 1;; ++seq) {
    f.sequence = seq;
    f.wallClockMs = static_cast<std::int64_t>(seq);
    fillPattern(f, layout);
    pub.publish(f);
    std::this_thread::sleep_for(1ms);
  }
}

int publishPaced(const std::string& name, const std::string& dir, std::uint32_t slots, int fps, int count) {
  const ImageLayout layout = testLayout();
  ShareOptions o;
  o.directory = dir;
  Publisher pub(name, SlotLayout::images(layout, slots), o);
  std::vector<std::uint8_t> storage(layout.totalBytes);
  Frame f;
  bindLayout(f, layout, storage.data(), MemoryKind::kHost);
  say("ready");
  const auto waitUntil = std::chrono::steady_clock::now() + 10s;
  while (pub.stats().readersConnected == 0 && std::chrono::steady_clock::now() < waitUntil)
    std::this_thread::sleep_for(1ms);
  const auto period = std::chrono::nanoseconds(1'000'000'000 / fps);
  auto due = std::chrono::steady_clock::now();
  for (int seq = 1; seq <= count; ++seq) {
    std::this_thread::sleep_until(due);
    f.sequence = static_cast<std::uint64_t>(seq);
    fillPattern(f, layout);
    pub.publish(f);
    due += period;
  }
  say("done");
  for (;;) std::this_thread::sleep_for(1s);
}

int publishDeviceVmm(const std::string& name, const std::string& dir, std::uint32_t slots) {
  const ImageLayout layout = testLayout();
  ShareOptions o;
  o.directory = dir;
  o.deviceExport = ShareOptions::DeviceExport::kVmmFd;
  Publisher pub(name, SlotLayout::deviceImages(layout, slots), o);
  int streamToken = 0;
  say("ready");
  for (std::uint64_t seq = 1;; ++seq) {
    WriteSlot ws = pub.acquireWrite();
    ws.frame().sequence = seq;
    fillPattern(ws.frame(), layout);  // the fake's "device" memory is host-mapped
    Frame meta;
    meta.sequence = seq;
    pub.commit(std::move(ws), meta, &streamToken);
    std::this_thread::sleep_for(1ms);
  }
}

int read(const std::string& name, const std::string& dir, int count, bool encoded, long maxInvalid) {
  SubscribeOptions o;
  o.directory = dir;
  Subscriber sub(name, o);
  const ImageLayout layout = testLayout();
  std::uint64_t lastSeq = 0;
  int verified = 0, invalid = 0;
  while (verified < count) {
    auto f = sub.next(10s);
    if (!f) {
      say("timeout after " + std::to_string(verified) + " frames");
      return 1;
    }
    std::string bad;
    if (encoded) {
      if (f->frame().bytesUsed != unitSize(f->frame().sequence)) bad = "size mismatch";
      if (f->frame().keyframe != unitKeyframe(f->frame().sequence)) bad = "keyframe flag mismatch";
      if (f->frame().times.at(Stage::kEncode) != static_cast<std::int64_t>(f->frame().sequence) * 1000)
        bad = "timestamp mismatch";
      for (std::size_t i = 0; bad.empty() && i < f->frame().bytesUsed; ++i) {
        if (f->frame().data[0][i] != patternByte(f->frame().sequence, 0, i))
          bad = "byte " + std::to_string(i);
      }
    } else {
      bad = checkPattern(f->frame(), layout);
    }
    if (!f->valid()) {  // overwritten while we looked: never trust it, never count it
      ++invalid;
      if (invalid > maxInvalid) {
        say("too many overruns");
        return 1;
      }
      continue;
    }
    if (!bad.empty()) {
      say("content mismatch on a valid frame: " + bad);
      return 1;
    }
    if (f->frame().sequence <= lastSeq) {
      say("sequence not rising: " + std::to_string(f->frame().sequence) + " after " +
          std::to_string(lastSeq));
      return 1;
    }
    lastSeq = f->frame().sequence;
    ++verified;
  }
  const auto s = sub.stats();
  say("ok verified=" + std::to_string(verified) + " invalid=" + std::to_string(invalid) +
      " missed=" + std::to_string(s.missed));
  return 0;
}

int hold(const std::string& name, const std::string& dir) {
  SubscribeOptions o;
  o.directory = dir;
  Subscriber sub(name, o);
  auto f = sub.next(10s);
  if (!f) {
    say("no frame");
    return 1;
  }
  say("leased " + std::to_string(f->frame().sequence));
  std::string line;
  while (std::getline(std::cin, line)) {
    if (line == "check") {
      const bool ok = checkPattern(f->frame(), testLayout()).empty() && f->valid();
      say(ok ? "still-valid" : "invalid");
    }
  }
  return 0;
}

int connect(const std::string& name, const std::string& dir, std::optional<std::uint32_t> publisherUid) {
  SubscribeOptions o;
  o.directory = dir;
  o.publisherUid = publisherUid;
  Subscriber sub(name, o);
  say("connected");
  return 0;
}

// What a renderer does with SharedFrame::deviceMemory(): maps (here: mmap; there: Vulkan) the kept fd
// and finds the frame's bytes at slotOffset.
int ringMemory(const std::string& name, const std::string& dir) {
  SubscribeOptions o;
  o.directory = dir;
  Subscriber sub(name, o);
  auto f = sub.next(10s);
  if (!f) {
    say("no frame");
    return 1;
  }
  const auto mem = f->deviceMemory();
  if (!mem) {
    say("no-ring-memory");
    return 0;
  }
  void* p = ::mmap(nullptr, mem->allocationBytes, PROT_READ, MAP_SHARED, mem->fd, 0);
  if (p == MAP_FAILED) {
    say(std::string("error mmap of the ring memory fd: ") + std::strerror(errno));
    return 1;
  }
  const ImageLayout& l = sub.info().layout;
  const auto* slot = static_cast<const std::uint8_t*>(p) + mem->slotOffset;
  const std::size_t bytes = std::size_t{l.planes[0].pitch} * l.planes[0].rows;
  const bool same = std::memcmp(slot + l.planes[0].offset, f->frame().data[0], bytes) == 0;
  const bool valid = f->valid();
  ::munmap(p, mem->allocationBytes);
  say("ring-memory stride=" + std::to_string(mem->slotStride) + " offset=" + std::to_string(mem->slotOffset) +
      " same-bytes=" + (same ? "1" : "0") + " valid=" + (valid ? "1" : "0"));
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<std::string> args(argv + 1, argv + argc);
  log::setLevel(log::Level::kWarn);
  static FakeDeviceTransport fakeDevice;
  if (!args.empty() && args[0] == "--fake-device") {
    share_detail::registerDeviceTransport(&fakeDevice);
    args.erase(args.begin());
  }
  if (args.size() >= 2 && args[0] == "--as-uid") {
    const auto uid = static_cast<uid_t>(std::stoul(args[1]));
    if (::setgroups(0, nullptr) != 0 || ::setgid(uid) != 0 || ::setuid(uid) != 0) {
      say("error setuid failed");
      return 3;
    }
    args.erase(args.begin(), args.begin() + 2);
  }
  try {
    if (args.size() == 4 && args[0] == "publish")
      return publish(args[1], args[2], static_cast<std::uint32_t>(std::stoul(args[3])));
    if (args.size() == 6 && args[0] == "publish-paced")
      return publishPaced(args[1], args[2], static_cast<std::uint32_t>(std::stoul(args[3])), std::stoi(args[4]),
                          std::stoi(args[5]));
    if ((args.size() == 4 || args.size() == 5) && args[0] == "read") {
      const int count = std::stoi(args[3]);
      return read(args[1], args[2], count, false, args.size() == 5 ? std::stol(args[4]) : count);
    }
    if (args.size() == 4 && args[0] == "read-encoded") {
      return read(args[1], args[2], std::stoi(args[3]), true, std::stoi(args[3]));
    }
    if (args.size() == 4 && args[0] == "publish-device-vmm")
      return publishDeviceVmm(args[1], args[2], static_cast<std::uint32_t>(std::stoul(args[3])));
    if (args.size() == 3 && args[0] == "ring-memory") return ringMemory(args[1], args[2]);
    if (args.size() == 3 && args[0] == "hold") return hold(args[1], args[2]);
    if (args.size() == 3 && args[0] == "connect") return connect(args[1], args[2], std::nullopt);
    if (args.size() == 4 && args[0] == "connect")
      return connect(args[1], args[2], static_cast<std::uint32_t>(std::stoul(args[3])));
  } catch (const Error& e) {
    say(std::string("error ") + errcName(e.code()) + ": " + e.what());
    return 2;
  }
  std::cerr << "usage: see the comment at the top of share_peer.cpp\n";
  return 3;
}
