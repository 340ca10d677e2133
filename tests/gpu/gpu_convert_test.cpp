// GpuConverter against the CPU reference (cpu_reference.hpp states the formulas): every supported
// pair, every ingest path (pageable copy, pinned copy, pinned zero-copy, banded and signalled copy,
// already on device), odd
// sizes, odd pitches and odd plane alignment, random and camera-like content, outputs poisoned
// before each run (two different poisons) and padding checked untouched.
// Tolerance: exact for YUV -> YUV and same-format copies; +-1 for RGB -> YUV (float vs double).
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <memory>
#include <random>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <tuple>
#include <vector>

#include "convert_test_support.hpp"
#include "gpu/kernels.hpp"
#include "gpu/ready_events.hpp"
#include "gpu_test_support.hpp"
#include "zerohop/clock.hpp"
#include "zerohop/error.hpp"
#include "zerohop/gpu_convert.hpp"

namespace zerohop::test {
namespace {

struct Geometry {
  std::uint32_t w, h, extraPitch, shift;
};
// 2x2: the smallest 4:2:0 frame; 34x18 with 3 extra bytes per row and planes at an odd address
// (scalar-load path); 642x362 with 70 extra bytes (rows not a multiple of the block size; 4-byte
// loads); 256x34 tight and 520x12 with 16 extra bytes (the 16-byte-load "wide" 4:2:2 kernel).
constexpr Geometry kGeometries[] = {{2, 2, 0, 0},     {34, 18, 3, 1},  {642, 362, 70, 0},
                                    {130, 66, 0, 0},  {256, 34, 0, 0}, {520, 12, 16, 0}};

// Bands for kPipelinedCopy and kSignalledCopy in these tests: 5 gives uneven bands (18 rows -> 4+4+4+4+2).
constexpr int kTestStripes = 5;

// kIngests plus the signalled copy (pageable sources take its kCopy fallback).
std::vector<Ingest> testIngests() {
  std::vector<Ingest> all(std::begin(kIngests), std::end(kIngests));
  all.push_back({MemoryKind::kHost, IngestMode::kSignalledCopy});
  all.push_back({MemoryKind::kPinned, IngestMode::kSignalledCopy});
  return all;
}

std::string describeCase(PixelFormat s, PixelFormat d, const Ingest& in, const Geometry& g, bool camera,
                         const ColorDesc& c, unsigned seed) {
  std::ostringstream os;
  os << formatName(s) << "->" << formatName(d) << " " << memoryKindName(in.memory) << "/" << ingestModeName(in.mode)
     << " " << g.w << "x" << g.h << " +" << g.extraPitch << " shift " << g.shift << (camera ? " camera" : " random")
     << " " << (c.matrix == ColorMatrix::kBt709 ? "bt709" : "bt601") << "/"
     << (c.range == ColorRange::kFull ? "full" : "limited") << " seed " << seed;
  return os.str();
}

// Converts `image` (placed in `in.memory`) into a poisoned device target and compares.
::testing::AssertionResult convertAndCompare(GpuConverter& conv, int device, const HostImage& image, PixelFormat dst,
                                             const Ingest& in, const Geometry& g, const ColorDesc& color) {
  PlacedFrame src(image, in.memory, device, g.shift);
  src.frame.color = ColorDesc{ColorMatrix::kBt709, ColorRange::kFull};  // must pass through for YUV sources
  src.frame.sequence = 77;
  DeviceTarget target(dst, g.w, g.h, g.extraPitch, device, g.shift);
  const HostImage ref = referenceConvert(image, dst, color);
  const int tolerance = isRgb(image.format) && dst != image.format ? 1 : 0;
  for (std::uint8_t poison : kPoisons) {
    target.poison(poison);
    target.frame.color = color;
    conv.convert(src.frame, target.frame);
    if (!target.frame.gpu.readyEvent) return ::testing::AssertionFailure() << "no ready event in dst";
    cuda::check(cudaEventSynchronize(static_cast<cudaEvent_t>(target.frame.gpu.readyEvent)), "cudaEventSynchronize");
    auto r = matchesReference(target.download(), ref, tolerance, poison);
    if (!r) return r << " (poison " << int(poison) << ")";
    if (target.frame.sequence != 77) return ::testing::AssertionFailure() << "sequence not carried";
    if (!isRgb(image.format) && !(target.frame.color == src.frame.color))
      return ::testing::AssertionFailure() << "YUV colour description not passed through";
    if (isRgb(image.format) && !(target.frame.color == color))
      return ::testing::AssertionFailure() << "RGB target colour description changed";
  }
  return ::testing::AssertionSuccess();
}

class GpuConvertPair : public GpuTest, public ::testing::WithParamInterface<std::tuple<PixelFormat, PixelFormat>> {};

TEST_P(GpuConvertPair, MatchesCpuReference) {
  const auto [srcFormat, dstFormat] = GetParam();
  ASSERT_TRUE(GpuConverter::supports(srcFormat, dstFormat));
  GpuConverter copy(device_, IngestMode::kCopy);
  GpuConverter zeroCopy(device_, IngestMode::kZeroCopy);
  GpuConverter pipelined(device_, IngestMode::kPipelinedCopy, kTestStripes);
  GpuConverter signalled(device_, IngestMode::kSignalledCopy);
  GpuConverter signalledBands(device_, IngestMode::kSignalledCopy, kTestStripes);
  const unsigned seed = freshSeed();
  std::mt19937 rng(seed);
  int cases = 0, failures = 0;
  for (const auto& g : kGeometries) {
    for (bool camera : {false, true}) {
      HostImage image = makeImage(srcFormat, g.w, g.h, g.extraPitch);
      if (camera) fillCameraLike(image, rng); else fillRandom(image, rng);
      for (const auto& in : testIngests()) {
        // Signalled: one band with random content, uneven bands with camera-like content.
        GpuConverter& conv = in.mode == IngestMode::kZeroCopy        ? zeroCopy
                             : in.mode == IngestMode::kPipelinedCopy ? pipelined
                             : in.mode == IngestMode::kSignalledCopy ? (camera ? signalledBands : signalled)
                                                                     : copy;
        const std::size_t colorCount = isRgb(srcFormat) ? std::size(kColors) : 1;
        for (std::size_t c = 0; c < colorCount; ++c) {
          ++cases;
          auto result = convertAndCompare(conv, device_, image, dstFormat, in, g, kColors[c]);
          if (!result && ++failures <= 10) {
            ADD_FAILURE() << describeCase(srcFormat, dstFormat, in, g, camera, kColors[c], seed) << ": "
                          << result.message();
          }
        }
      }
    }
  }
  EXPECT_EQ(failures, 0) << failures << " of " << cases << " cases failed (seed " << seed << ")";
}

std::vector<std::tuple<PixelFormat, PixelFormat>> allPairs() {
  std::vector<std::tuple<PixelFormat, PixelFormat>> pairs;
  for (auto s : {PixelFormat::kYUYV, PixelFormat::kUYVY, PixelFormat::kNV12, PixelFormat::kI420, PixelFormat::kRGB24,
                 PixelFormat::kBGRx, PixelFormat::kRGBA}) {
    pairs.emplace_back(s, PixelFormat::kNV12);
    pairs.emplace_back(s, PixelFormat::kI420);
    if (s != PixelFormat::kNV12 && s != PixelFormat::kI420) pairs.emplace_back(s, s);
  }
  return pairs;
}

INSTANTIATE_TEST_SUITE_P(AllPairs, GpuConvertPair, ::testing::ValuesIn(allPairs()),
                         [](const auto& param) {
                           return std::string(formatName(std::get<0>(param.param))) + "_to_" +
                                  std::string(formatName(std::get<1>(param.param)));
                         });

class GpuConvert : public GpuTest {};

TEST_F(GpuConvert, CameraSizedFramesMatch) {
  const unsigned seed = freshSeed();
  std::mt19937 rng(seed);
  struct Big {
    PixelFormat src, dst;
    std::uint32_t w, h;
  };
  for (const Big& b : {Big{PixelFormat::kYUYV, PixelFormat::kNV12, 1920, 1080},
                       Big{PixelFormat::kUYVY, PixelFormat::kI420, 1280, 720},
                       Big{PixelFormat::kBGRx, PixelFormat::kNV12, 1920, 1080},
                       Big{PixelFormat::kYUYV, PixelFormat::kNV12, 3840, 2160}}) {
    HostImage image = makeImage(b.src, b.w, b.h);
    fillCameraLike(image, rng);
    for (IngestMode mode : {IngestMode::kCopy, IngestMode::kZeroCopy, IngestMode::kPipelinedCopy,
                            IngestMode::kSignalledCopy}) {
      GpuConverter conv(device_, mode);
      const Geometry g{b.w, b.h, 0, 0};
      const Ingest in{MemoryKind::kPinned, mode};
      const ColorDesc color{ColorMatrix::kBt709, ColorRange::kLimited};
      EXPECT_TRUE(convertAndCompare(conv, device_, image, b.dst, in, g, color))
          << describeCase(b.src, b.dst, in, g, true, color, seed);
    }
  }
}

TEST_F(GpuConvert, ReadyEventOrdersAConsumerStream) {
  std::mt19937 rng(freshSeed());
  const HostImage image = randomImage(PixelFormat::kYUYV, 1280, 720, rng);
  PlacedFrame src(image, MemoryKind::kPinned, device_);
  DeviceTarget target(PixelFormat::kNV12, 1280, 720, 0, device_);
  DeviceTarget copyOfTarget(PixelFormat::kNV12, 1280, 720, 0, device_);
  target.poison(0xCD);
  copyOfTarget.poison(0xCD);
  GpuConverter conv(device_);
  CudaStream consumer(device_);
  conv.convert(src.frame, target.frame);  // asynchronous
  ASSERT_NE(target.frame.gpu.readyEvent, nullptr);
  EXPECT_EQ(target.frame.gpu.device, device_);
  // The consumer orders its own stream after the frame, never the host.
  cuda::check(cudaStreamWaitEvent(consumer.get(), static_cast<cudaEvent_t>(target.frame.gpu.readyEvent), 0),
              "cudaStreamWaitEvent");
  for (std::uint32_t p = 0; p < 2; ++p) {
    const std::size_t bytes = std::size_t(target.frame.pitch[p]) * (p == 0 ? 720 : 360);
    cuda::check(cudaMemcpyAsync(copyOfTarget.frame.data[p], target.frame.data[p], bytes, cudaMemcpyDeviceToDevice,
                                consumer.get()),
                "cudaMemcpyAsync");
  }
  consumer.synchronize();
  EXPECT_TRUE(matchesReference(copyOfTarget.download(), referenceConvert(image, PixelFormat::kNV12, {}), 0, 0xCD));

  // One event per destination buffer, re-recorded when that buffer is written again.
  void* first = target.frame.gpu.readyEvent;
  conv.convert(src.frame, target.frame);
  EXPECT_EQ(target.frame.gpu.readyEvent, first);
  conv.convert(src.frame, copyOfTarget.frame);
  EXPECT_NE(copyOfTarget.frame.gpu.readyEvent, first);
  cuda::check(cudaStreamSynchronize(static_cast<cudaStream_t>(conv.stream())), "cudaStreamSynchronize");
}

// A caller converting into ever new destination buffers must not grow the converter's ready events
// without bound: at most ReadyEvents::kCapacity distinct events come back, and every frame is still
// right when waited on through its own (possibly since handed-over) event.
TEST_F(GpuConvert, ManyDestinationBuffersShareABoundedSetOfReadyEvents) {
  std::mt19937 rng(freshSeed());
  const HostImage image = randomImage(PixelFormat::kYUYV, 64, 32, rng);
  const HostImage ref = referenceConvert(image, PixelFormat::kNV12, {});
  PlacedFrame src(image, MemoryKind::kPinned, device_);
  GpuConverter conv(device_);
  constexpr std::size_t kBuffers = 4 * gpu_detail::ReadyEvents::kCapacity;
  std::vector<std::unique_ptr<DeviceTarget>> targets;
  std::set<void*> events;
  for (std::size_t i = 0; i < kBuffers; ++i) {
    targets.push_back(std::make_unique<DeviceTarget>(PixelFormat::kNV12, 64, 32, 0, device_));
    targets.back()->poison(0xCD);
    conv.convert(src.frame, targets.back()->frame);
    ASSERT_NE(targets.back()->frame.gpu.readyEvent, nullptr);
    events.insert(targets.back()->frame.gpu.readyEvent);
  }
  EXPECT_LE(events.size(), gpu_detail::ReadyEvents::kCapacity)
      << kBuffers << " destination buffers: one event each would grow without bound";
  for (std::size_t i = 0; i < kBuffers; i += 7) {
    cuda::check(cudaEventSynchronize(static_cast<cudaEvent_t>(targets[i]->frame.gpu.readyEvent)),
                "cudaEventSynchronize");
    EXPECT_TRUE(matchesReference(targets[i]->download(), ref, 0, 0xCD)) << "buffer " << i;
  }
}

TEST_F(GpuConvert, WaitsOnTheSourceReadyEvent) {
  // A producer on its own stream uploads a device frame and records an event; the converter must
  // wait for it on its stream without any host synchronisation in between.
  std::mt19937 rng(freshSeed());
  const HostImage image = randomImage(PixelFormat::kUYVY, 3840, 2160, rng);
  PlacedFrame staged(image, MemoryKind::kPinned, device_);
  DeviceTarget deviceSrc(PixelFormat::kUYVY, 3840, 2160, 0, device_);
  deviceSrc.poison(0x11);
  CudaStream producer(device_);
  CudaEvent produced(device_, false);
  cuda::check(cudaMemcpyAsync(deviceSrc.frame.data[0], staged.frame.data[0], image.plane[0].size(),
                              cudaMemcpyHostToDevice, producer.get()),
              "cudaMemcpyAsync");
  produced.record(producer.get());
  deviceSrc.frame.gpu.readyEvent = produced.get();
  DeviceTarget target(PixelFormat::kI420, 3840, 2160, 0, device_);
  target.poison(0xCD);
  GpuConverter conv(device_);
  conv.convert(deviceSrc.frame, target.frame);
  cuda::check(cudaStreamSynchronize(static_cast<cudaStream_t>(conv.stream())), "cudaStreamSynchronize");
  EXPECT_TRUE(matchesReference(target.download(), referenceConvert(image, PixelFormat::kI420, {}), 0, 0xCD));
  producer.synchronize();
}

class GpuConvertMode : public GpuTest, public ::testing::WithParamInterface<IngestMode> {};

TEST_P(GpuConvertMode, CallerStreamAndWaitCompletionMarkStages) {
  std::mt19937 rng(freshSeed());
  HostImage image = makeImage(PixelFormat::kYUYV, 640, 480);
  fillCameraLike(image, rng);
  PlacedFrame src(image, MemoryKind::kPinned, device_);
  src.frame.times.mark(Stage::kCapture, monotonicNs());
  src.frame.sequence = 9;
  src.frame.wallClockMs = 1234;
  src.frame.keyframe = true;
  DeviceTarget target(PixelFormat::kNV12, 640, 480, 0, device_);
  target.poison(0xCD);
  CudaStream mine(device_);
  GpuConverter conv(device_, GetParam());
  conv.convert(src.frame, target.frame, mine.get(), Completion::kWait);
  const std::int64_t after = monotonicNs();
  // kWait: the pixels are ready when convert returns, without any further synchronisation.
  EXPECT_EQ(cudaEventQuery(static_cast<cudaEvent_t>(target.frame.gpu.readyEvent)), cudaSuccess);
  const auto& t = target.frame.times;
  EXPECT_LE(t.at(Stage::kCapture), t.at(Stage::kIngest));
  EXPECT_LE(t.at(Stage::kIngest), t.at(Stage::kConvert));
  EXPECT_LE(t.at(Stage::kConvert), after);
  EXPECT_EQ(target.frame.sequence, 9u);
  EXPECT_EQ(target.frame.wallClockMs, 1234);
  EXPECT_TRUE(target.frame.keyframe);
  EXPECT_TRUE(matchesReference(target.download(), referenceConvert(image, PixelFormat::kNV12, {}), 0, 0xCD));
}

INSTANTIATE_TEST_SUITE_P(Modes, GpuConvertMode,
                         ::testing::Values(IngestMode::kCopy, IngestMode::kZeroCopy, IngestMode::kPipelinedCopy,
                                           IngestMode::kSignalledCopy),
                         [](const auto& param) {
                           std::string name = ingestModeName(param.param);
                           std::replace(name.begin(), name.end(), '-', '_');
                           return name;
                         });

// kSignalledCopy uses 3 staging buffers in turn: 7 frames go round them twice.
constexpr int kStagingReuseFrames = 7;

// `count` random YUYV frames in pinned memory, each with its own poisoned NV12 target.
struct FrameBatch {
  FrameBatch(int count, std::uint32_t w, std::uint32_t h, int device, std::mt19937& rng) {
    for (int i = 0; i < count; ++i) {
      images.push_back(randomImage(PixelFormat::kYUYV, w, h, rng));
      sources.push_back(std::make_unique<PlacedFrame>(images.back(), MemoryKind::kPinned, device));
      targets.push_back(std::make_unique<DeviceTarget>(PixelFormat::kNV12, w, h, 0, device));
      targets.back()->poison(0xCD);
    }
  }
  int size() const { return static_cast<int>(images.size()); }
  Frame& source(int i) { return sources[static_cast<std::size_t>(i)]->frame; }
  Frame& target(int i) { return targets[static_cast<std::size_t>(i)]->frame; }
  // Each target against the CPU reference of its own source (every target read back).
  void expectEachMatches(const std::string& what) {
    for (std::size_t i = 0; i < images.size(); ++i) {
      EXPECT_TRUE(matchesReference(targets[i]->download(), referenceConvert(images[i], PixelFormat::kNV12, {}), 0,
                                   0xCD))
          << what << " frame " << i;
    }
  }

  std::vector<HostImage> images;
  std::vector<std::unique_ptr<PlacedFrame>> sources;
  std::vector<std::unique_ptr<DeviceTarget>> targets;
};

TEST_F(GpuConvert, StagingIsSharedSafelyAcrossCallerStreams) {
  // Consecutive frames on different caller streams, no host synchronisation in between: a frame's
  // upload into a staging buffer must wait until the kernel that read it before (another stream's)
  // has finished.
  std::mt19937 rng(freshSeed());
  for (IngestMode mode : {IngestMode::kCopy, IngestMode::kPipelinedCopy, IngestMode::kSignalledCopy}) {
    GpuConverter conv(device_, mode);
    CudaStream one(device_), two(device_);
    FrameBatch batch(kStagingReuseFrames, 1920, 1080, device_, rng);
    for (int i = 0; i < batch.size(); ++i) conv.convert(batch.source(i), batch.target(i), (i % 2 ? two : one).get());
    one.synchronize();
    two.synchronize();
    batch.expectEachMatches(ingestModeName(mode));
  }
}

TEST_F(GpuConvert, SignalledBackToBackFramesEachComeOutRight) {
  // Frames enqueued back to back without host synchronisation, each with different content, into
  // different targets and then all into one target: a kernel that took a stale flag value would
  // convert the previous frame's bytes (or a half-copied staging buffer), an upload that did not wait
  // for the staging buffer's previous reader would overwrite it under that kernel (3 buffers in turn:
  // 8 frames reuse each of them at least twice).
  std::mt19937 rng(freshSeed());
  constexpr int kFrames = 8;
  for (int stripes : {1, 2, 3}) {
    GpuConverter conv(device_, IngestMode::kSignalledCopy, stripes);
    std::vector<HostImage> images;
    std::vector<std::unique_ptr<PlacedFrame>> sources;
    std::vector<std::unique_ptr<DeviceTarget>> targets;
    for (int i = 0; i < kFrames; ++i) {
      images.push_back(makeImage(PixelFormat::kYUYV, 1920, 1080));
      if (i % 2) {
        fillRandom(images.back(), rng);
      } else {
        fillCameraLike(images.back(), rng);
      }
      sources.push_back(std::make_unique<PlacedFrame>(images.back(), MemoryKind::kPinned, device_));
      targets.push_back(std::make_unique<DeviceTarget>(PixelFormat::kNV12, 1920, 1080, 0, device_));
      targets.back()->poison(0xCD);
    }
    for (int i = 0; i < kFrames; ++i) conv.convert(sources[i]->frame, targets[i]->frame);
    for (int i = 0; i < kFrames; ++i) {
      cuda::check(cudaEventSynchronize(static_cast<cudaEvent_t>(targets[i]->frame.gpu.readyEvent)),
                  "cudaEventSynchronize");
      EXPECT_TRUE(matchesReference(targets[i]->download(), referenceConvert(images[i], PixelFormat::kNV12, {}), 0,
                                   0xCD))
          << stripes << " band(s), frame " << i;
    }
    // The same destination each time, checked after each frame.
    DeviceTarget one(PixelFormat::kNV12, 1920, 1080, 0, device_);
    for (int i = 0; i < kFrames; ++i) {
      one.poison(0x5A);
      conv.convert(sources[i]->frame, one.frame, nullptr, Completion::kWait);
      EXPECT_TRUE(matchesReference(one.download(), referenceConvert(images[i], PixelFormat::kNV12, {}), 0, 0x5A))
          << stripes << " band(s), frame " << i << " into one target";
    }
  }
}

// 300 ms of host work on `stream` (longer than the signalled kernel's 100 ms give-up).
void stall(const CudaStream& stream) {
  cuda::check(cudaLaunchHostFunc(
                  stream.get(), [](void*) { std::this_thread::sleep_for(std::chrono::milliseconds(300)); }, nullptr),
              "cudaLaunchHostFunc");
}

TEST_F(GpuConvert, SignalledKernelWaitsOutABusyCallerStream) {
  // Frames 0-3 go on a caller's stream whose kernels sit behind 300 ms of other work, so every
  // staging buffer stays busy (frame 3 reuses frame 0's); frame 4 on the converter's own stream
  // reuses frame 1's: neither its upload nor its kernel (and its 100 ms clock) may start before that
  // kernel has read it. kWait throws if a kernel timed out; every frame is checked.
  std::mt19937 rng(freshSeed());
  FrameBatch batch(5, 1280, 720, device_, rng);
  const int last = batch.size() - 1;
  GpuConverter conv(device_, IngestMode::kSignalledCopy);
  CudaStream busy(device_);
  stall(busy);
  for (int i = 0; i < last; ++i) conv.convert(batch.source(i), batch.target(i), busy.get());
  conv.convert(batch.source(last), batch.target(last), nullptr, Completion::kWait);
  busy.synchronize();
  batch.expectEachMatches("busy caller stream,");
  conv.convert(batch.source(0), batch.target(0), nullptr, Completion::kWait);  // and no late error either
}

TEST_F(GpuConvert, SignalledKernelWaitsForAnEarlierBlockedUpload) {
  // Frame 1's source is ready only after 300 ms of a producer's work (its ready event), so its upload
  // waits on the copy stream; frame 2, on another stream, has a free staging buffer and no event, but
  // its upload queues behind frame 1's: its kernel must not start its 100 ms clock before then.
  std::mt19937 rng(freshSeed());
  const HostImage first = randomImage(PixelFormat::kUYVY, 1280, 720, rng);
  const HostImage second = randomImage(PixelFormat::kYUYV, 1280, 720, rng);
  PlacedFrame src1(first, MemoryKind::kPinned, device_), src2(second, MemoryKind::kPinned, device_);
  DeviceTarget dst1(PixelFormat::kI420, 1280, 720, 0, device_), dst2(PixelFormat::kNV12, 1280, 720, 0, device_);
  dst1.poison(0xCD);
  dst2.poison(0xCD);
  GpuConverter conv(device_, IngestMode::kSignalledCopy);
  // Every staging buffer allocated first (3 frames), so nothing below allocates memory.
  for (int i = 0; i < 3; ++i) conv.convert(src2.frame, dst2.frame, nullptr, Completion::kWait);
  dst2.poison(0xCD);
  CudaStream producer(device_), other(device_);
  CudaEvent produced(device_, false);
  stall(producer);
  produced.record(producer.get());
  src1.frame.gpu.readyEvent = produced.get();
  conv.convert(src1.frame, dst1.frame);
  conv.convert(src2.frame, dst2.frame, other.get(), Completion::kWait);  // throws if a kernel timed out
  cuda::check(cudaEventSynchronize(static_cast<cudaEvent_t>(dst1.frame.gpu.readyEvent)), "cudaEventSynchronize");
  EXPECT_TRUE(matchesReference(dst1.download(), referenceConvert(first, PixelFormat::kI420, {}), 0, 0xCD));
  EXPECT_TRUE(matchesReference(dst2.download(), referenceConvert(second, PixelFormat::kNV12, {}), 0, 0xCD));
  conv.convert(src2.frame, dst2.frame, nullptr, Completion::kWait);  // and no late error either
}

// The signalled kernel on its own (kernels::packed422To420 with an IngestSignal) and StreamFlag with
// each writer: it converts once the flag has reached its ticket, never on an older value, and gives
// up after kSignalTimeoutNs, saying so in the error word and leaving dst untouched.
TEST_F(GpuConvert, SignalledKernelWaitsForItsTicketAndTimesOut) {
  std::mt19937 rng(freshSeed());
  const HostImage image = randomImage(PixelFormat::kYUYV, 640, 480, rng);
  const HostImage ref = referenceConvert(image, PixelFormat::kNV12, {});
  PlacedFrame src(image, MemoryKind::kPinned, device_);
  DeviceTarget target(PixelFormat::kNV12, 640, 480, 0, device_);
  DeviceBuffer staging(device_, image.plane[0].size());
  PinnedBuffer errorWord(device_, sizeof(std::uint32_t));
  auto* error = reinterpret_cast<volatile std::uint32_t*>(errorWord.data());
  void* errorOnDevice = nullptr;
  cuda::check(cudaHostGetDevicePointer(&errorOnDevice, errorWord.data(), 0), "cudaHostGetDevicePointer");
  CudaStream kernelStream(device_), copyStream(device_);
  kernels::PlanesIn in;
  in.data[0] = staging.data();
  in.pitch[0] = src.frame.pitch[0];
  kernels::PlanesOut out;
  for (int p = 0; p < 2; ++p) {
    out.data[p] = target.frame.data[p];
    out.pitch[p] = target.frame.pitch[p];
  }
  for (bool streamWrite : {true, false}) {
    SCOPED_TRACE(streamWrite ? "stream write (when the driver has it)" : "copied flag");
    StreamFlag flag(device_, streamWrite);
    if (streamWrite) {
      std::printf("StreamFlag writer on this device: %s\n", flag.writer());
    } else {
      EXPECT_STREQ(flag.writer(), "cudaMemcpyAsync");
    }
    *error = 0;
    // The flag holds ticket 7 (stale); the kernel waits for 8, which never comes.
    flag.set(copyStream.get(), 7);
    copyStream.synchronize();
    target.poison(0xCD);
    const kernels::IngestSignal waitFor8{flag.word(), 8, 480, static_cast<std::uint32_t*>(errorOnDevice)};
    const auto t0 = std::chrono::steady_clock::now();
    kernels::packed422To420(kernels::Packed422::kYUYV, kernels::Out420::kNV12, in, out, 640, 480,
                            kernelStream.get(), &waitFor8);
    kernelStream.synchronize();
    const auto waited = std::chrono::steady_clock::now() - t0;
    EXPECT_EQ(*error, 8u);
    EXPECT_GE(waited, std::chrono::nanoseconds(kernels::kSignalTimeoutNs));
    EXPECT_LT(waited, std::chrono::seconds(5));
    const HostImage untouched = target.download();
    for (std::uint32_t p = 0; p < 2; ++p) {
      for (std::uint8_t b : untouched.plane[p]) ASSERT_EQ(b, 0xCD) << "a timed-out kernel wrote plane " << p;
    }
    // Kernel first, then the upload in 2 bands (tickets 8, 9) on the other stream.
    *error = 0;
    const kernels::IngestSignal bands{flag.word(), 8, 240, static_cast<std::uint32_t*>(errorOnDevice)};
    kernels::packed422To420(kernels::Packed422::kYUYV, kernels::Out420::kNV12, in, out, 640, 480,
                            kernelStream.get(), &bands);
    const std::size_t half = std::size_t(240) * src.frame.pitch[0];
    cuda::check(cudaMemcpyAsync(staging.data(), src.frame.data[0], half, cudaMemcpyHostToDevice, copyStream.get()),
                "cudaMemcpyAsync");
    flag.set(copyStream.get(), 8);
    cuda::check(cudaMemcpyAsync(staging.data() + half, src.frame.data[0] + half, image.plane[0].size() - half,
                                cudaMemcpyHostToDevice, copyStream.get()),
                "cudaMemcpyAsync");
    flag.set(copyStream.get(), 9);
    kernelStream.synchronize();
    copyStream.synchronize();
    EXPECT_EQ(*error, 0u);
    EXPECT_TRUE(matchesReference(target.download(), ref, 0, 0xCD));
    cuda::check(cudaMemset(staging.data(), 0, image.plane[0].size()), "cudaMemset");
  }
}

TEST_F(GpuConvert, RejectsWhatItCannotDo) {
  GpuConverter copy(device_, IngestMode::kCopy);
  GpuConverter zeroCopy(device_, IngestMode::kZeroCopy);
  HostImage image = makeImage(PixelFormat::kYUYV, 64, 32);
  std::mt19937 rng(1);
  fillRandom(image, rng);
  PlacedFrame pageable(image, MemoryKind::kHost, device_);
  DeviceTarget target(PixelFormat::kNV12, 64, 32, 0, device_);
  expectRefusal(Errc::kInvalidArgument, "zero-copy", [&] { zeroCopy.convert(pageable.frame, target.frame); });
  Frame hostDst = target.frame;
  hostDst.memory = MemoryKind::kHost;
  expectRefusal(Errc::kInvalidArgument, "device memory", [&] { copy.convert(pageable.frame, hostDst); });
  Frame smaller = target.frame;
  smaller.height = 30;
  expectRefusal(Errc::kInvalidArgument, "size mismatch", [&] { copy.convert(pageable.frame, smaller); });
  Frame mjpegDst = target.frame;
  mjpegDst.format = PixelFormat::kMJPEG;
  expectRefusal(Errc::kInvalidArgument, "mjpeg", [&] { copy.convert(pageable.frame, mjpegDst); });
  Frame oddSrc = pageable.frame, oddDst = target.frame;
  oddSrc.height = oddDst.height = 31;
  expectRefusal(Errc::kInvalidArgument, "even", [&] { copy.convert(oddSrc, oddDst); });
  Frame nullPlane = target.frame;
  nullPlane.data[1] = nullptr;
  expectRefusal(Errc::kInvalidArgument, "plane 1", [&] { copy.convert(pageable.frame, nullPlane); });
  // Ordinary malloc'd memory claimed to be pinned: CUDA's own error, naming the call.
  Frame fakePinned = pageable.frame;
  fakePinned.memory = MemoryKind::kPinned;
  try {
    zeroCopy.convert(fakePinned, target.frame);
    ADD_FAILURE() << "zero-copy from ordinary malloc memory did not fail";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("cudaHostGetDevicePointer failed: cudaError"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace zerohop::test
