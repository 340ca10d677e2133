// JpegBatcher: frames handed in by many camera threads at once are decoded in shared batched calls,
// byte for byte as the one-frame-per-call decode (decodeBatch of that frame alone: the same nvJPEG
// path on every backend; on the hardware backend decode() is that call too); a bad frame in a batch fails only
// its own caller; the batch limit is checked before any device work.
#include <gtest/gtest.h>

#include <atomic>
#include <latch>
#include <memory>
#include <thread>
#include <vector>

#include "gpu/jpeg_batcher.hpp"
#include "gpu_test_support.hpp"
#include "jpeg_test_support.hpp"
#include "zerohop/error.hpp"
#include "zerohop/gpu_jpeg.hpp"

namespace zerohop::test {
namespace {

using namespace std::chrono_literals;

constexpr std::uint32_t kW = 640, kH = 480;
constexpr std::uint8_t kPoison = 0x5A;

class JpegBatcherTest : public GpuTest {
 protected:
  void SetUp() override {
    GpuTest::SetUp();
    if (IsSkipped()) return;
    const JpegSupport s = probeJpeg(device_);
    if (!s.available) GTEST_SKIP() << "nvJPEG not usable: " << s.reason;
  }
};

/// The one-frame-per-call reference: `in` decoded alone into a fresh target of `format`.
HostImage decodeAlone(GpuJpegDecoder& decoder, const Frame& in, PixelFormat format, std::uint32_t extraPitch, int device) {
  DeviceTarget ref(format, kW, kH, extraPitch, device);
  ref.poison(kPoison);
  const Frame* src[1] = {&in};
  Frame* dst[1] = {&ref.frame};
  decoder.decodeBatch(src, dst, Completion::kWait);
  return ref.download();
}

/// One camera: its own picture, the frames it decodes through the batcher, and the reference.
struct Camera {
  Camera(int index, int device)
      : jpeg(testing::compressJpeg(testing::cameraPlanes(kW, kH, 100 + index), index % 2 ? TJSAMP_420 : TJSAMP_422)),
        in(jpeg, kW, kH, device) {}
  std::vector<std::uint8_t> jpeg;
  PinnedJpeg in;
  std::vector<std::unique_ptr<DeviceTarget>> out;
  std::exception_ptr error;
};

TEST(JpegBatcherOptionsTest, RefusesABatchLimitOrDecoderCountOutOfRange) {
  struct Bad {
    std::size_t maxBatch;
    int decoders;
    const char* named;
  };
  for (const Bad& bad : {Bad{0, 1, "maxBatch"}, Bad{1025, 1, "maxBatch"}, Bad{64, 0, "decoders"}, Bad{64, 9, "decoders"}}) {
    JpegBatcherOptions o;
    o.maxBatch = bad.maxBatch;
    o.decoders = bad.decoders;
    try {
      JpegBatcher b(o);
      FAIL() << "maxBatch " << bad.maxBatch << ", decoders " << bad.decoders << " was accepted";
    } catch (const Error& e) {
      EXPECT_EQ(e.code(), Errc::kInvalidArgument) << e.what();
      EXPECT_NE(std::string(e.what()).find(bad.named), std::string::npos) << e.what();
    }
  }
}

TEST_F(JpegBatcherTest, FramesOfManyCamerasDecodeInSharedBatchesByteForByteAsAlone) {
  constexpr int kCameras = 12, kFramesEach = 6;
  JpegBatcherOptions o;
  o.device = device_;
  o.gather = 5ms;  // makes the cameras' frames share calls
  o.decoders = 2;  // two workers take turns on the queue
  JpegBatcher batcher(o);
  std::vector<std::unique_ptr<Camera>> cams;
  for (int c = 0; c < kCameras; ++c) cams.push_back(std::make_unique<Camera>(c, device_));
  std::vector<std::thread> threads;
  for (int c = 0; c < kCameras; ++c) {
    threads.emplace_back([&, c] {
      Camera& cam = *cams[c];
      try {  // each frame into a fresh poisoned target: an unwritten byte shows
        for (int f = 0; f < kFramesEach; ++f) {
          cam.out.push_back(std::make_unique<DeviceTarget>(c % 3 ? PixelFormat::kNV12 : PixelFormat::kI420, kW, kH, 32, device_));
          cam.out.back()->poison(kPoison);
          batcher.decode(cam.in.frame, cam.out.back()->frame);
        }
      } catch (...) {
        cam.error = std::current_exception();
      }
    });
  }
  for (auto& t : threads) t.join();

  const JpegBatcherStats st = batcher.stats();
  EXPECT_EQ(st.frames, std::uint64_t{kCameras} * kFramesEach);
  EXPECT_EQ(st.failed, 0u);
  EXPECT_GT(st.largestBatch, 1u) << "every frame went alone: nothing was batched";
  EXPECT_LT(st.batches, std::uint64_t{kCameras} * kFramesEach);
  std::cout << "[batcher] " << batcher.describe() << ": " << st.batches << " calls for " << st.frames
            << " frames, largest " << st.largestBatch << "\n";

  GpuJpegDecoder alone(device_);  // the batcher's backend (both kAuto)
  for (int c = 0; c < kCameras; ++c) {
    Camera& cam = *cams[c];
    if (cam.error) {
      try {
        std::rethrow_exception(cam.error);
      } catch (const std::exception& e) {
        FAIL() << "camera " << c << ": " << e.what();
      }
    }
    ASSERT_EQ(cam.out.size(), std::size_t{kFramesEach});
    const HostImage want = decodeAlone(alone, cam.in.frame, cam.out[0]->frame.format, 32, device_);
    for (int f = 0; f < kFramesEach; ++f) {
      const HostImage got = cam.out[f]->download();
      for (std::uint32_t p = 0; p < want.planeCount; ++p)
        EXPECT_TRUE(got.plane[p] == want.plane[p]) << "camera " << c << " frame " << f << " plane " << p;
    }
  }
}

TEST_F(JpegBatcherTest, ABadFrameInABatchFailsOnlyItsOwnCamera) {
  constexpr int kCameras = 6, kBad = 2;
  JpegBatcherOptions o;
  o.device = device_;
  o.gather = 200ms;  // long: the latch lines the cameras up, so the bad frame shares a call
  o.maxBatch = kCameras;  // the batch closes as soon as all six are in
  JpegBatcher batcher(o);
  std::vector<std::unique_ptr<Camera>> cams;
  for (int c = 0; c < kCameras; ++c) cams.push_back(std::make_unique<Camera>(c, device_));
  // Framed like a JPEG (SOI ... EOI), so it passes the framing check and reaches nvJPEG, which refuses it.
  std::vector<std::uint8_t> garbage(cams[kBad]->jpeg.size(), 0x11);
  garbage[0] = 0xFF, garbage[1] = 0xD8, garbage[garbage.size() - 2] = 0xFF, garbage[garbage.size() - 1] = 0xD9;
  PinnedJpeg bad(garbage, kW, kH, device_);
  std::latch ready(kCameras);
  std::vector<std::thread> threads;
  for (int c = 0; c < kCameras; ++c) {
    threads.emplace_back([&, c] {
      Camera& cam = *cams[c];
      cam.out.push_back(std::make_unique<DeviceTarget>(PixelFormat::kNV12, kW, kH, 0, device_));
      cam.out.back()->poison(kPoison);
      ready.arrive_and_wait();
      try {
        batcher.decode(c == kBad ? bad.frame : cam.in.frame, cam.out.back()->frame);
      } catch (...) {
        cam.error = std::current_exception();
      }
    });
  }
  for (auto& t : threads) t.join();

  const JpegBatcherStats st = batcher.stats();
  EXPECT_EQ(st.failed, 1u);
  EXPECT_EQ(st.frames, std::uint64_t{kCameras - 1});
  EXPECT_GE(st.retriedBatches, 1u) << "the bad frame never shared a batch: the isolation path did not run";
  GpuJpegDecoder alone(device_);  // the batcher's backend (both kAuto)
  for (int c = 0; c < kCameras; ++c) {
    if (c == kBad) {
      ASSERT_TRUE(cams[c]->error) << "the bad frame decoded";
      try {
        std::rethrow_exception(cams[c]->error);
      } catch (const Error& e) {
        EXPECT_NE(std::string(e.what()).find("nvjpeg"), std::string::npos) << e.what();
      }
      continue;
    }
    ASSERT_FALSE(cams[c]->error) << "camera " << c << " failed for another camera's bad frame";
    const HostImage want = decodeAlone(alone, cams[c]->in.frame, PixelFormat::kNV12, 0, device_);
    const HostImage got = cams[c]->out[0]->download();
    for (std::uint32_t p = 0; p < want.planeCount; ++p) EXPECT_TRUE(got.plane[p] == want.plane[p]) << "camera " << c;
  }
  // The batcher goes on: the next frame of the bad camera decodes.
  DeviceTarget next(PixelFormat::kNV12, kW, kH, 0, device_);
  EXPECT_NO_THROW(batcher.decode(cams[kBad]->in.frame, next.frame));
}

}  // namespace
}  // namespace zerohop::test
