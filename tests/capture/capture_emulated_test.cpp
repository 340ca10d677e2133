// Our V4L2 capture against the emulated camera (run under zerohop-camemu by CTest): every format
// x memory mode, lease re-queue, lifetime, negotiation, enumeration, and each injected fault.
#include <gtest/gtest.h>
#include <pthread.h>
#include <signal.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdlib>
#include <mutex>
#include <set>
#include <thread>
#include <vector>

#include "core/payload_check.hpp"
#include "emulator_env.hpp"
#include "zerohop/capture.hpp"
#include "zerohop/clock.hpp"
#include "zerohop/error.hpp"
#include "zerohop/log.hpp"
#include "zerohop/timecode.hpp"
#include "picture_timecode.hpp"

namespace zerohop {
namespace {

using namespace std::chrono_literals;

SourceSpec spec(const std::string& query) {
  return parseSourceSpec("v4l2:" + test::emulatedDevice() + (query.empty() ? "" : "?" + query));
}

// Page-aligned host memory that counts what it hands out (a stand-in for the pinned allocator).
struct AllocatorLedger {
  std::mutex mutex;
  std::vector<std::pair<std::uint8_t*, std::size_t>> live;
  int allocations = 0;
};

class CountingAllocator final : public FrameAllocator {
 public:
  explicit CountingAllocator(AllocatorLedger& ledger) : ledger_(ledger), host_(makeHostAllocator()) {}
  MemoryKind kind() const noexcept override {
    return MemoryKind::kPinned;
  }  // pretend, as cudaHostAlloc would
  void* allocate(std::size_t bytes) override {
    void* p = host_->allocate(bytes);
    std::lock_guard lock(ledger_.mutex);
    ledger_.live.emplace_back(static_cast<std::uint8_t*>(p), bytes);
    ++ledger_.allocations;
    return p;
  }
  void deallocate(void* ptr, std::size_t bytes) noexcept override {
    {
      std::lock_guard lock(ledger_.mutex);
      std::erase_if(ledger_.live, [&](const auto& e) { return e.first == ptr; });
    }
    host_->deallocate(ptr, bytes);
  }

 private:
  AllocatorLedger& ledger_;
  std::unique_ptr<FrameAllocator> host_;
};

FrameLease nextFrame(FrameSource& source, std::chrono::milliseconds timeout = 3000ms) {
  auto lease = source.next(timeout);
  if (!lease) throw std::runtime_error("no frame within the timeout");
  return std::move(*lease);
}

using test::pictureTimecode;

struct Mode {
  const char* format;
  const char* memory;
};

class CaptureEveryMode : public ::testing::TestWithParam<Mode> {};

TEST_P(CaptureEveryMode, DeliversTimecodedFramesWithDriverTimestamps) {
  ZEROHOP_REQUIRE_EMULATOR("");
  const Mode mode = GetParam();
  const PixelFormat format = *parseFormat(mode.format);
#ifndef ZEROHOP_TEST_WITH_JPEG
  if (isCompressed(format)) GTEST_SKIP() << "MJPEG/H.264 emulation needs ZEROHOP_WITH_MEDIA";
#endif
  const bool userptr = std::string_view(mode.memory) == "userptr";
  AllocatorLedger ledger;
  SourceOptions options;
  options.bufferCount = 4;
  if (userptr) options.allocatorFactory = [&] { return std::make_unique<CountingAllocator>(ledger); };
  {
    auto source = openV4l2Source(
        spec(std::string("format=") + mode.format + "&size=640x480&fps=60&memory=" + mode.memory), options);
    const SourceInfo info = source->info();
    EXPECT_EQ(info.format, format);
    EXPECT_EQ(info.width, 640u);
    EXPECT_EQ(info.height, 480u);
    EXPECT_DOUBLE_EQ(info.fps, 60);
    EXPECT_EQ(info.memory, userptr ? MemoryKind::kPinned : MemoryKind::kHost);
    EXPECT_EQ(info.color.range, format == PixelFormat::kMJPEG ? ColorRange::kFull : ColorRange::kLimited);
    if (userptr) {
      EXPECT_EQ(ledger.allocations, 4);
    }

    std::int64_t lastCapture = 0;
    std::uint64_t lastSeq = 0;
    for (int i = 0; i < 8; ++i) {
      FrameLease lease = nextFrame(*source);
      const Frame& f = lease.frame();
      ASSERT_EQ(f.format, format);
      EXPECT_TRUE(isCompressed(format) || f.keyframe);
      ASSERT_EQ(f.width, 640u);
      ASSERT_GT(f.bytesUsed, 0u);
      if (format == PixelFormat::kH264) {
        EXPECT_EQ(core_detail::annexBDefect(f.data[0], f.bytesUsed), nullptr);
        EXPECT_TRUE(i > 0 || f.keyframe) << "an H.264 stream must start with an IDR";
      } else if (format == PixelFormat::kMJPEG) {
        EXPECT_EQ(core_detail::mjpegDefect(f.data[0], f.bytesUsed), nullptr);
        EXPECT_LT(f.bytesUsed, 640u * 480 * 2 / 3) << "an MJPEG frame should be far smaller than raw";
      } else {
        EXPECT_EQ(f.bytesUsed, computeLayout(format, 640, 480).totalBytes);
      }
      if (userptr) {  // the driver wrote into our allocator's memory, no copy
        std::lock_guard lock(ledger.mutex);
        EXPECT_TRUE(std::any_of(ledger.live.begin(), ledger.live.end(), [&](const auto& e) {
          return f.data[0] >= e.first && f.data[0] < e.first + e.second;
        }));
      }
      // Capture time is the driver's CLOCK_MONOTONIC stamp: before ingest, recent, increasing.
      const std::int64_t cap = f.times.at(Stage::kCapture);
      EXPECT_GT(cap, 0);
      EXPECT_LE(cap, f.times.at(Stage::kIngest));
      EXPECT_LT(monotonicNs() - cap, 1'000'000'000);
      if (i > 0) {
        EXPECT_GT(cap, lastCapture);
        EXPECT_GT(f.sequence, lastSeq);
      }
      lastCapture = cap;
      lastSeq = f.sequence;
      // The picture carries the test camera's timecode: sequence and wall clock match the frame.
      // (H.264 pictures are checked by decoding in camemu.client.ffmpeg-h264.)
      if (format == PixelFormat::kH264) continue;
      const auto tc = pictureTimecode(f);
      ASSERT_TRUE(tc.has_value()) << "no readable timecode in frame " << f.sequence;
      EXPECT_EQ(tc->sequence, f.sequence & kTimecodeSeqMask);
      EXPECT_LE(std::llabs(static_cast<long long>(tc->wallClockMs) - (f.wallClockMs & kTimecodeMsMask)), 3);
    }
    EXPECT_EQ(source->counters().errors, 0u);
  }
  if (userptr) {
    std::lock_guard lock(ledger.mutex);
    EXPECT_TRUE(ledger.live.empty()) << ledger.live.size() << " USERPTR buffers leaked";
  }
}

INSTANTIATE_TEST_SUITE_P(Capture, CaptureEveryMode,
                         ::testing::Values(Mode{"yuyv", "mmap"}, Mode{"yuyv", "userptr"},
                                           Mode{"uyvy", "mmap"}, Mode{"uyvy", "userptr"},
                                           Mode{"nv12", "mmap"}, Mode{"nv12", "userptr"},
                                           Mode{"mjpeg", "mmap"}, Mode{"mjpeg", "userptr"},
                                           Mode{"h264", "mmap"}, Mode{"h264", "userptr"}),
                         [](const auto& p) { return std::string(p.param.format) + "_" + p.param.memory; });

TEST(Capture, FrameRateFollowsTheDriverClock) {
  ZEROHOP_REQUIRE_EMULATOR("");
  auto source = openV4l2Source(spec("format=yuyv&size=640x480&fps=30"));
  // Driver timestamps per sequence step (ticks a loaded machine skipped count too).
  FrameLease first = nextFrame(*source);
  const std::int64_t t0 = first->captureNs();
  const std::uint64_t s0 = first->sequence;
  first.reset();
  FrameLease last;
  for (int i = 0; i < 9; ++i) last = nextFrame(*source);
  const double periodMs =
      static_cast<double>(last->captureNs() - t0) / static_cast<double>(last->sequence - s0) / 1e6;
  EXPECT_NEAR(periodMs, 1000.0 / 30, 1.0);
}

TEST(Capture, ReleasingALeaseRequeuesItsBuffer) {
  ZEROHOP_REQUIRE_EMULATOR("");
  SourceOptions options;
  options.bufferCount = 2;
  auto source = openV4l2Source(spec("format=yuyv&size=640x480&fps=60"), options);
  FrameLease a = nextFrame(*source);
  FrameLease b = nextFrame(*source);
  // Both buffers are with us: the camera has nowhere to write, so nothing arrives.
  EXPECT_FALSE(source->next(150ms).has_value());
  const auto seqBefore = b->sequence;
  a.reset();
  b.reset();
  FrameLease c = nextFrame(*source);
  // The frames the camera could not deliver meanwhile show up as a sequence gap, counted as drops.
  EXPECT_GT(c->sequence, seqBefore + 1);
  EXPECT_GT(source->counters().drops, 0u);
  EXPECT_EQ(source->counters().frames, 3u);
}

TEST(Capture, LeaseOutlivesTheSource) {
  ZEROHOP_REQUIRE_EMULATOR("");
  FrameLease kept;
  {
    auto source = openV4l2Source(spec("format=yuyv&size=640x480&fps=60&memory=mmap"));
    kept = nextFrame(*source);
  }
  // The source is gone (streaming stopped) but the buffer is still mapped for the lease.
  const auto tc = readTimecode(kept.frame());
  ASSERT_TRUE(tc.has_value());
  EXPECT_EQ(tc->sequence, kept->sequence & kTimecodeSeqMask);
  kept.reset();  // re-queue after STREAMOFF is skipped, the queue is then torn down
}

TEST(Capture, NearestModeIsChosenAndLogged) {
  ZEROHOP_REQUIRE_EMULATOR("");
  std::vector<std::string> lines;
  std::mutex m;
  log::setSink([&](log::Level, std::string_view line) {
    std::lock_guard lock(m);
    lines.emplace_back(line);
  });
  std::unique_ptr<FrameSource> source;
  try {
    source = openV4l2Source(spec("format=yuyv&size=1000x600&fps=50"));
  } catch (...) {
    log::setSink(nullptr);
    throw;
  }
  log::setSink(nullptr);
  EXPECT_EQ(source->info().width, 1280u);
  EXPECT_EQ(source->info().height, 720u);
  EXPECT_DOUBLE_EQ(source->info().fps, 60);  // offered: 60 (the emulator's --fps), 30, 15
  const bool logged = std::any_of(lines.begin(), lines.end(), [](const std::string& l) {
    return l.find("nearest") != std::string::npos &&
           l.find("1280x720 instead of 1000x600") != std::string::npos;
  });
  EXPECT_TRUE(logged) << "no log line explains the substitution";
  EXPECT_TRUE(nextFrame(*source));
}

TEST(Capture, MissingDeviceIsNotFound) {
  ZEROHOP_REQUIRE_EMULATOR("");
  try {
    openV4l2Source(parseSourceSpec("v4l2:/dev/video63"));
    FAIL() << "expected an Error";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), Errc::kNotFound) << e.what();
  }
}

TEST(Capture, ProbeListsTheEmulatedCamera) {
  ZEROHOP_REQUIRE_EMULATOR("");
  const auto nodes = listVideoNodes();
  ASSERT_NE(std::find(nodes.begin(), nodes.end(), test::emulatedDevice()), nodes.end());
  const auto devices = probeCaptureDevices();
  ASSERT_EQ(devices.size(), 1u);
  const CaptureDevice& d = devices.front();
  EXPECT_EQ(d.driver, "zerohop-camemu");
  EXPECT_EQ(d.busInfo, "platform:zerohop-camemu");
  EXPECT_TRUE(d.streaming);
  EXPECT_TRUE(d.mmap);
  EXPECT_TRUE(d.userptr);
  EXPECT_TRUE(d.exportsDmabuf);
  std::set<PixelFormat> formats;
  for (const auto& f : d.formats) {
    formats.insert(f.format);
    EXPECT_EQ(f.compressed, isCompressed(f.format));
    ASSERT_FALSE(f.sizes.empty());
    const auto& vga = f.sizes.front();
    EXPECT_EQ(vga.width, 640u);
    EXPECT_EQ(vga.fps, (std::vector<double>{60, 30, 15}));
  }
  EXPECT_TRUE(formats.count(PixelFormat::kYUYV));
  EXPECT_TRUE(formats.count(PixelFormat::kNV12));
  const std::string text = describeCaptureDevice(d);
  EXPECT_NE(text.find("zerohop emulated camera"), std::string::npos) << text;
  EXPECT_NE(text.find("memory: mmap userptr  expbuf: yes"), std::string::npos) << text;
  EXPECT_NE(text.find("640x480     60 30 15 fps"), std::string::npos) << text;
#ifdef ZEROHOP_TEST_WITH_JPEG
  EXPECT_TRUE(formats.count(PixelFormat::kMJPEG));
#endif
}

TEST(Capture, SignalsDuringCaptureAreRetriedNotReported) {
  ZEROHOP_REQUIRE_EMULATOR("");
  // A handler installed without SA_RESTART makes poll() fail with EINTR on every signal.
  struct sigaction sa {};
  sa.sa_handler = [](int) {};
  sigemptyset(&sa.sa_mask);
  struct sigaction old {};
  ASSERT_EQ(sigaction(SIGUSR1, &sa, &old), 0);
  auto source = openV4l2Source(spec("format=yuyv&size=640x480&fps=60"));
  const pthread_t self = pthread_self();
  std::atomic<bool> stop{false};
  std::atomic<int> sent{0};
  std::thread pest([&] {
    while (!stop) {
      pthread_kill(self, SIGUSR1);
      ++sent;
      std::this_thread::sleep_for(1ms);
    }
  });
  int frames = 0;
  try {
    for (; frames < 15; ++frames) nextFrame(*source);
  } catch (...) {
    stop = true;
    pest.join();
    sigaction(SIGUSR1, &old, nullptr);
    throw;
  }
  stop = true;
  pest.join();
  sigaction(SIGUSR1, &old, nullptr);
  EXPECT_EQ(frames, 15);
  EXPECT_GT(sent.load(), 20);
}

TEST(Capture, ReopeningLeaksNothing) {
  ZEROHOP_REQUIRE_EMULATOR("");
  { auto warm = openV4l2Source(spec("format=yuyv&size=640x480&fps=60")); }
  const int before = test::openFdCount();
  for (int i = 0; i < 3; ++i) {
    auto source = openV4l2Source(spec(i % 2 ? "format=yuyv&size=640x480&fps=60&memory=userptr"
                                            : "format=yuyv&size=640x480&fps=60&memory=mmap"));
    EXPECT_TRUE(nextFrame(*source));
  }
  EXPECT_EQ(test::openFdCount(), before);
}

// ---- faults (each case runs in its own emulator process; see tests/capture/CMakeLists.txt) --------

TEST(CaptureFaults, ErrorFlaggedBuffersAreDroppedAndCounted) {
  ZEROHOP_REQUIRE_EMULATOR("error-every=3");
  auto source = openV4l2Source(spec("format=yuyv&size=640x480&fps=60"));
  // Read until five error-flagged buffers were counted (about 12 frames; a loaded machine may skip ticks,
  // so the count of frames it takes varies: bounded at 120 frames instead of assumed).
  int delivered = 0;
  for (; delivered < 120 && source->counters().errors < 5; ++delivered) {
    FrameLease f = nextFrame(*source);
    EXPECT_NE((f->sequence + 1) % 3, 0u) << "an error-flagged frame was delivered";
  }
  EXPECT_GE(source->counters().errors, 5u) << "after " << delivered << " frames";
  EXPECT_GE(delivered, 8) << "error-every=3 leaves two good frames of three";
}

TEST(CaptureFaults, BrokenJpegsNeverReachTheConsumer) {
  ZEROHOP_REQUIRE_EMULATOR("corrupt-every=4");
#ifndef ZEROHOP_TEST_WITH_JPEG
  GTEST_SKIP() << "MJPEG emulation needs ZEROHOP_WITH_MEDIA";
#endif
  auto source = openV4l2Source(spec("format=mjpeg&size=640x480&fps=60"));
  for (int i = 0; i < 20; ++i) {
    FrameLease f = nextFrame(*source);
    const auto n = f->sequence + 1;
    EXPECT_NE(n % 4, 0u) << "a JPEG without EOI was delivered";
    EXPECT_NE(n % 5, 0u) << "a truncated JPEG was delivered";
    EXPECT_NE(n % 7, 0u) << "an empty buffer was delivered";
    EXPECT_EQ(core_detail::mjpegDefect(f->data[0], f->bytesUsed), nullptr);
    ASSERT_TRUE(pictureTimecode(f.frame()).has_value());
  }
  EXPECT_GE(source->counters().errors, 8u);
}

TEST(CaptureFaults, SequenceGapsAreCountedAsDrops) {
  ZEROHOP_REQUIRE_EMULATOR("drop-every=4");
  auto source = openV4l2Source(spec("format=yuyv&size=640x480&fps=60"));
  for (int i = 0; i < 12; ++i) EXPECT_NE((nextFrame(*source)->sequence + 1) % 4, 0u);
  EXPECT_GE(source->counters().drops, 3u);
  EXPECT_EQ(source->counters().errors, 0u);
}

TEST(CaptureFaults, StallIsReportedOnceAndCaptureResumes) {
  ZEROHOP_REQUIRE_EMULATOR("stall-at=");
  auto source = openV4l2Source(spec("format=yuyv&size=640x480&fps=30"));
  int frames = 0;
  int timeouts = 0;
  const auto until = std::chrono::steady_clock::now() + 5s;
  while (frames < 20 && std::chrono::steady_clock::now() < until) {
    if (source->next(50ms))
      ++frames;
    else
      ++timeouts;
  }
  EXPECT_EQ(frames, 20);
  EXPECT_GT(timeouts, 0) << "the stall should make next() time out";
  EXPECT_EQ(source->counters().stalls, 1u);
}

TEST(CaptureFaults, SlowFramesArriveLateAndLateFramesAreDrops) {
  ZEROHOP_REQUIRE_EMULATOR("slow-every=");
  auto source = openV4l2Source(spec("format=yuyv&size=640x480&fps=60"));
  std::int64_t last = 0;
  std::int64_t longest = 0;
  for (int i = 0; i < 16; ++i) {
    const std::int64_t t = nextFrame(*source)->times.at(Stage::kIngest);
    if (last) longest = std::max(longest, t - last);
    last = t;
  }
  EXPECT_GT(longest, 80'000'000) << "a 100 ms late frame should leave a gap";
  // While the late frame was on its way the camera skipped ticks: the sequence shows the gap.
  EXPECT_GT(source->counters().drops, 0u);
}

TEST(CaptureFaults, UnplugIsUnavailableAndReplugResumes) {
  ZEROHOP_REQUIRE_EMULATOR("unplug-at=");
  const int fdsBefore = test::openFdCount();
  {
    auto source = openV4l2Source(spec("format=yuyv&size=640x480&fps=60&memory=userptr"));
    try {
      for (int i = 0; i < 100; ++i) source->next(1000ms);
      FAIL() << "the unplug was never reported";
    } catch (const Error& e) {
      EXPECT_EQ(e.code(), Errc::kUnavailable) << e.what();
      EXPECT_NE(std::string(e.what()).find("disconnected"), std::string::npos) << e.what();
    }
  }
  // While unplugged the node is gone.
  try {
    openV4l2Source(spec("format=yuyv&size=640x480&fps=60"));
    FAIL() << "opened an unplugged camera";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), Errc::kNotFound) << e.what();
  }
  // It comes back; a bounded retry reopens it.
  std::unique_ptr<FrameSource> again;
  for (int attempt = 0; attempt < 100 && !again; ++attempt) {  // bounded: 5 s
    try {
      again = openV4l2Source(spec("format=yuyv&size=640x480&fps=60"));
    } catch (const Error& e) {
      ASSERT_EQ(e.code(), Errc::kNotFound) << e.what();
      std::this_thread::sleep_for(50ms);
    }
  }
  ASSERT_TRUE(again) << "the camera did not come back";
  EXPECT_TRUE(nextFrame(*again));
  again.reset();
  EXPECT_EQ(test::openFdCount(), fdsBefore);
}

TEST(CaptureFaults, ReconnectingSourceRidesThroughAnUnplug) {
  ZEROHOP_REQUIRE_EMULATOR("unplug-at=");
  const int fdsBefore = test::openFdCount();
  {
    auto source = openReconnectingV4l2Source(spec("format=yuyv&size=640x480&fps=60&memory=userptr"), {},
                                             ReconnectPolicy{20ms, 200ms});
    int frames = 0;
    int empty = 0;
    bool restarted = false;  // the sequence starts again with the new session
    std::uint64_t lastSeq = 0;
    FrameLease heldAcrossUnplug;
    const auto until = std::chrono::steady_clock::now() + 10s;
    while (frames < 40 && std::chrono::steady_clock::now() < until) {
      auto lease = source->next(100ms);  // must never throw for an unplug
      if (!lease) {
        ++empty;
        continue;
      }
      if (frames > 0 && (*lease)->sequence < lastSeq) restarted = true;
      lastSeq = (*lease)->sequence;
      if (frames == 5) heldAcrossUnplug = std::move(*lease);  // a lease from the old session
      ++frames;
    }
    EXPECT_EQ(frames, 40);
    EXPECT_GT(empty, 0) << "the outage should be visible as timeouts";
    EXPECT_TRUE(restarted);
    EXPECT_GE(source->counters().stalls, 1u);
    EXPECT_GE(source->counters().frames, 39u);
    ASSERT_TRUE(heldAcrossUnplug);
    EXPECT_TRUE(readTimecode(heldAcrossUnplug.frame()).has_value())
        << "old session's buffer freed under a lease";
  }
  EXPECT_EQ(test::openFdCount(), fdsBefore);
}

}  // namespace
}  // namespace zerohop
