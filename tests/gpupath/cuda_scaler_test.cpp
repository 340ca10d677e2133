// The GPU path's scaler for a ladder's lower rungs (makeCudaScaler, label gpu): a camera-like device
// NV12 frame scaled to I420 in host, page-locked and device memory and to NV12 in device memory, each
// against the CPU reference's bilinear resample (+-1 per byte, tests/gpu/cpu_reference.hpp), the rows'
// padding left as it was (poisoned before); the frame's sequence, capture clock and stage times carried
// over; requests it cannot do refused with the reason.
#include <gtest/gtest.h>

#include <random>

#include "../gpu/gpu_test_support.hpp"
#include "gpupath/cuda_scaler.hpp"
#include "zerohop/error.hpp"

namespace zerohop::test {
namespace {

constexpr std::uint8_t kPoison = 0xCD;

class CudaScalerTest : public GpuTest {};

/// The destination's planes as they are now, padding included.
HostImage readBack(const Frame& f, const HostImage& shape) {
  HostImage im = shape;
  cuda::check(cudaDeviceSynchronize(), "cudaDeviceSynchronize(test read)");
  for (std::uint32_t p = 0; p < im.planeCount; ++p) {
    cuda::check(cudaMemcpy(im.plane[p].data(), f.data[p], im.plane[p].size(), cudaMemcpyDefault), "cudaMemcpy(test read)");
  }
  return im;
}

TEST_F(CudaScalerTest, ScalesADeviceFrameIntoEachMemoryAsTheReferenceDoes) {
  std::mt19937 rng(11);
  HostImage image = makeImage(PixelFormat::kNV12, 1280, 720, 64);
  fillCameraLike(image, rng);
  PlacedFrame src(image, MemoryKind::kDevice, device_, 3);
  src.frame.sequence = 42;
  src.frame.wallClockMs = 1'700'000'000'123;
  src.frame.times.mark(Stage::kCapture, 1000);
  src.frame.times.mark(Stage::kConvert, 2000);
  auto scaler = makeCudaScaler(device_);

  struct Case {
    PixelFormat format;
    MemoryKind memory;
    std::uint32_t width, height, extraPitch;
  };
  for (const Case c : {Case{PixelFormat::kI420, MemoryKind::kHost, 640, 360, 0},
                       Case{PixelFormat::kI420, MemoryKind::kPinned, 320, 180, 40},
                       Case{PixelFormat::kI420, MemoryKind::kDevice, 640, 360, 24},
                       Case{PixelFormat::kNV12, MemoryKind::kDevice, 320, 180, 0}}) {
    SCOPED_TRACE(std::string(formatName(c.format)) + " " + memoryKindName(c.memory) + " " + std::to_string(c.width) +
                 "x" + std::to_string(c.height));
    const HostImage shape = makeImage(c.format, c.width, c.height, c.extraPitch, kPoison);
    PlacedFrame dst(shape, c.memory, device_);  // every byte kPoison
    scaler->scale(src.frame, dst.frame);        // twice: the scratch frame of this size is reused
    scaler->scale(src.frame, dst.frame);
    const HostImage want = referenceResample(image, c.format, c.width, c.height, {});
    EXPECT_TRUE(matchesReference(readBack(dst.frame, shape), want, 1, kPoison));
    EXPECT_EQ(dst.frame.sequence, 42u);
    EXPECT_EQ(dst.frame.wallClockMs, 1'700'000'000'123);
    EXPECT_EQ(dst.frame.times.at(Stage::kCapture), 1000);
    EXPECT_EQ(dst.frame.times.at(Stage::kConvert), 2000) << "a rung keeps rung 0's stage times";
  }
}

TEST_F(CudaScalerTest, RefusesWhatItCannotScaleSayingWhy) {
  HostImage image = makeImage(PixelFormat::kNV12, 64, 32);
  PlacedFrame src(image, MemoryKind::kDevice, device_);
  auto scaler = makeCudaScaler(device_);
  PlacedFrame rgba(makeImage(PixelFormat::kRGBA, 32, 16), MemoryKind::kHost, device_);
  try {
    scaler->scale(src.frame, rgba.frame);
    ADD_FAILURE() << "an RGBA destination was taken";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), Errc::kUnsupported);
    EXPECT_NE(std::string(e.what()).find("rgba"), std::string::npos) << e.what();
  }
  PlacedFrame odd(makeImage(PixelFormat::kI420, 32, 16), MemoryKind::kHost, device_);
  odd.frame.width = 31;
  try {
    scaler->scale(src.frame, odd.frame);
    ADD_FAILURE() << "an odd width was taken";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), Errc::kInvalidArgument);
    EXPECT_NE(std::string(e.what()).find("even size"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace zerohop::test
