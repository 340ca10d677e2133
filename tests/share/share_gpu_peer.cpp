// Helper process for the share gpu tests: a device-ring publisher or reader in a process of its own.
//   publish NAME DIR SLOTS            prints "ready", publishes pattern frames written IN PLACE by a
//                                     kernel (acquireWrite + commit on its stream), 1 ms apart, until killed
//   read NAME DIR COUNT [LINGER_MS]   verifies COUNT frames WITH A KERNEL on its own stream after
//                                     cudaStreamWaitEvent(readyEvent) + rising sequence; prints
//                                     "ok verified=N invalid=M transport=T", or "error <errc>: <message>".
//                                     With LINGER_MS it also prints "verifying" after its first verified
//                                     frame, and on an error keeps the ring mapped LINGER_MS more (a reader
//                                     slow to let go) before it unmaps, hangs up and exits 2
//   hold NAME DIR                     leases a frame, prints "leased SEQ", waits to be killed
// Exit status: 0 success, 1 verification failure, 2 zerohop::Error, 3 usage.
#include <chrono>
#include <cstdlib>
#include <iostream>
#include <optional>
#include <string>
#include <thread>

#include "gpu/cuda_check.hpp"
#include "gpu/cuda_handles.hpp"
#include "gpu_pattern.hpp"
#include "share_test_support.hpp"
#include "zerohop/error.hpp"
#include "zerohop/log.hpp"
#include "zerohop/share.hpp"

using namespace zerohop;
using namespace zerohop::share_test;
using namespace std::chrono_literals;

namespace {

void say(const std::string& line) {
  std::cout << line << std::endl;
}

int publish(const std::string& name, const std::string& dir, std::uint32_t slots) {
  const ImageLayout layout = testLayout();
  ShareOptions o;
  o.directory = dir;
  Publisher pub(name, SlotLayout::deviceImages(layout, slots, 0), o);
  CudaStream stream(0);
  say("ready");
  for (std::uint64_t seq = 1;; ++seq) {
    WriteSlot ws = pub.acquireWrite();
    launchFillPattern(ws.frame(), layout, seq, stream.get());
    Frame meta;
    meta.sequence = seq;
    pub.commit(std::move(ws), meta, stream.get());
    std::this_thread::sleep_for(1ms);
  }
}

int read(const std::string& name, const std::string& dir, int count, int lingerMs = -1) {
  SubscribeOptions o;
  o.directory = dir;
  // Several GPUs: the reader's device and a forced copy come from the environment.
  const char* readerDevice = std::getenv("ZEROHOP_TEST_READER_DEVICE");
  if (readerDevice) o.device = std::atoi(readerDevice);
  if (const char* access = std::getenv("ZEROHOP_TEST_DEVICE_ACCESS"); access && std::string(access) == "copy")
    o.deviceAccess = SubscribeOptions::DeviceAccess::kCopy;
  Subscriber sub(name, o);
  if (sub.info().memory != MemoryKind::kDevice) {
    say("not a device ring");
    return 1;
  }
  const ImageLayout layout = testLayout();
  const int device = readerDevice ? o.device : 0;
  cuda::check(cudaSetDevice(device), "cudaSetDevice(reader)");
  CudaStream stream(device);
  PatternChecker checker(device);
  std::uint64_t lastSeq = 0;
  int verified = 0, invalid = 0;
  std::optional<SharedFrame> held;  // LINGER_MS: the last verified frame, which keeps the ring mapped
  while (verified < count) {
    std::optional<SharedFrame> f;
    try {
      f = sub.next(10s);
    } catch (const Error& e) {
      if (lingerMs < 0) throw;
      say(std::string("error ") + errcName(e.code()) + ": " + e.what());
      std::this_thread::sleep_for(std::chrono::milliseconds(lingerMs));
      return 2;  // releasing `held` unmaps the ring and hangs up
    }
    if (!f) {
      say("timeout after " + std::to_string(verified) + " frames");
      return 1;
    }
    const Frame& fr = f->frame();
    if (fr.memory != MemoryKind::kDevice || !fr.gpu.readyEvent) {
      say("frame is not a device frame with a ready event");
      return 1;
    }
    // Order our kernel after the publisher's write, on the GPU: no host synchronisation.
    cuda::check(cudaStreamWaitEvent(stream.get(), static_cast<cudaEvent_t>(fr.gpu.readyEvent), 0),
                "cudaStreamWaitEvent(readyEvent)");
    const std::uint32_t bad = checker.check(fr, layout, fr.sequence, stream.get());
    if (!f->valid()) {  // overwritten while our kernel read it: never trust it
      if (++invalid > count) {
        say("too many overruns");
        return 1;
      }
      continue;
    }
    if (bad != 0) {
      say("content mismatch on a valid frame: seq " + std::to_string(fr.sequence) + ", " +
          std::to_string(bad) + " bytes wrong");
      return 1;
    }
    if (fr.sequence <= lastSeq) {
      say("sequence not rising: " + std::to_string(fr.sequence) + " after " + std::to_string(lastSeq));
      return 1;
    }
    lastSeq = fr.sequence;
    if (++verified == 1 && lingerMs >= 0) say("verifying");
    if (lingerMs >= 0) held = std::move(f);
  }
  say("ok verified=" + std::to_string(verified) + " invalid=" + std::to_string(invalid) +
      " transport=" + sub.info().transport + " access=" + sub.info().deviceAccess);
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
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<std::string> args(argv + 1, argv + argc);
  log::setLevel(log::Level::kWarn);
  try {
    if (args.size() == 4 && args[0] == "publish")
      return publish(args[1], args[2], static_cast<std::uint32_t>(std::stoul(args[3])));
    if (args.size() == 4 && args[0] == "read") return read(args[1], args[2], std::stoi(args[3]));
    if (args.size() == 5 && args[0] == "read")
      return read(args[1], args[2], std::stoi(args[3]), std::stoi(args[4]));
    if (args.size() == 3 && args[0] == "hold") return hold(args[1], args[2]);
  } catch (const Error& e) {
    say(std::string("error ") + errcName(e.code()) + ": " + e.what());
    return 2;
  }
  std::cerr << "usage: see the comment at the top of share_gpu_peer.cpp\n";
  return 3;
}
