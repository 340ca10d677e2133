// What a renderer registered with Subscriber::signalOnPublish costs the publisher's commit: the next
// slot's choice for the announcement and one signal per renderer. Device rings through the fake device
// transport (tests/share: host memory, signals recorded, no GPU), so this is the library's own work per
// commit; CUDA's cudaSignalExternalSemaphoresAsync and event record come on top on a GPU. Four
// publishers of 1080p NV12 side by side (no reader, one reader, one renderer signalled, four renderers
// signalled), their commits interleaved frame by frame so all see the same machine; readers read every
// frame (next(), or confirm() of the announced frame for renderers) outside the timed call.
//   zerohop_share_commit_bench [--frames N] [--rounds R]
// Prints p50/p99 ns of Publisher::commit for each and the difference from the reader-less one.
#include <fcntl.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "bench_stats.hpp"
#include "fake_device_transport.hpp"
#include "zerohop/clock.hpp"
#include "zerohop/log.hpp"
#include "zerohop/share.hpp"

using namespace zerohop;

namespace {

struct Case {
  const char* what;
  int readers;
  bool signalled;
  std::unique_ptr<Publisher> pub;
  std::vector<Subscriber> subs;
  std::vector<double> ns;
};

}  // namespace

int main(int argc, char** argv) {
  int frames = 20000, rounds = 5;
  for (int i = 1; i + 1 < argc; i += 2) {
    if (!std::strcmp(argv[i], "--frames")) frames = std::atoi(argv[i + 1]);
    if (!std::strcmp(argv[i], "--rounds")) rounds = std::atoi(argv[i + 1]);
  }
  log::setLevel(log::Level::kWarn);
  char tmpl[] = "/tmp/zh-commit-bench-XXXXXX";
  if (!::mkdtemp(tmpl)) return 1;
  share_test::FakeDeviceTransport fake;
  share_detail::registerDeviceTransport(&fake);
  int streamToken = 0;  // the producer's "stream": the signals go on it, as the commit names it
  ShareOptions so;
  so.directory = tmpl;
  SubscribeOptions ro;
  ro.directory = tmpl;
  const auto layout = computeLayout(PixelFormat::kNV12, 1920, 1080, 256);
  std::vector<Case> cases;
  cases.push_back({"no reader", 0, false, {}, {}, {}});
  cases.push_back({"1 reader, next()", 1, false, {}, {}, {}});
  cases.push_back({"1 renderer signalled", 1, true, {}, {}, {}});
  cases.push_back({"4 renderers signalled", 4, true, {}, {}, {}});
  const auto commitOne = [&](Publisher& pub, std::uint64_t seq) {
    WriteSlot ws = pub.acquireWrite();
    Frame meta;
    meta.sequence = seq;
    const std::int64_t t0 = monotonicNs();
    pub.commit(std::move(ws), meta, &streamToken);
    return static_cast<double>(monotonicNs() - t0);
  };
  try {
    for (std::size_t c = 0; c < cases.size(); ++c) {
      Case& k = cases[c];
      const std::string name = "commit" + std::to_string(c);
      k.pub = std::make_unique<Publisher>(name, SlotLayout::deviceImages(layout, 8), so);
      commitOne(*k.pub, 0);
      for (int r = 0; r < k.readers; ++r) {
        k.subs.emplace_back(name, ro);
        if (k.signalled) {
          int fds[2];
          if (::pipe2(fds, O_CLOEXEC) != 0) return 1;
          k.subs.back().signalOnPublish(fds[1]);  // the fake imports the fd as CUDA would a semaphore's
          ::close(fds[0]);
        }
      }
      k.ns.reserve(static_cast<std::size_t>(frames) * static_cast<std::size_t>(rounds));
    }
    std::uint64_t confirmed = 0, read = 0;
    for (int r = 0; r < rounds; ++r) {
      for (int i = 1; i <= frames; ++i) {
        for (Case& k : cases) {
          std::vector<std::optional<UpcomingFrame>> next;
          for (Subscriber& s : k.subs) next.push_back(k.signalled ? s.upcoming() : std::nullopt);
          k.ns.push_back(commitOne(*k.pub, static_cast<std::uint64_t>(i)));
          for (std::size_t s = 0; s < k.subs.size(); ++s) {
            std::optional<SharedFrame> f =
                next[s] ? k.subs[s].confirm(*next[s]) : k.subs[s].next(std::chrono::milliseconds(1000));
            confirmed += next[s] && f ? 1 : 0;
            read += f ? 1 : 0;
          }
        }
      }
      const std::lock_guard lock(fake.signalsMutex);  // what the fake recorded (outside the timed calls)
      fake.signals.clear();
    }
    const double base50 = bench::pct(cases[0].ns, 50);
    std::printf(
        "Publisher::commit of a 1080p NV12 device frame (fake device transport), %d frames x %d rounds "
        "each, interleaved; %llu frames read, %llu of them confirmed as announced\n",
        frames, rounds, static_cast<unsigned long long>(read), static_cast<unsigned long long>(confirmed));
    std::printf("| publisher | commit p50 ns | p99 ns | p50 over no reader |\n|---|---|---|---|\n");
    for (const Case& k : cases) {
      const double p50 = bench::pct(k.ns, 50), p99 = bench::pct(k.ns, 99);
      std::printf("| %s | %.0f | %.0f | %+.0f |\n", k.what, p50, p99, p50 - base50);
    }
  } catch (const std::exception& e) {
    std::fprintf(stderr, "zerohop_share_commit_bench: %s\n", e.what());
    return 1;
  }
  cases.clear();
  share_detail::registerDeviceTransport(nullptr);
  std::filesystem::remove_all(tmpl);
  return 0;
}
