// GpuH264Decoder on the GPU (label gpu): committed clips decoded by NVDEC must match libavcodec's
// decode of the same bytes bit for bit (H.264 decoding is exact), frame by frame, into poisoned
// destination frames whose padding must stay untouched. Corrupt, truncated and garbage access
// units must fail alone or be concealed, and the next IDR must match the reference again.
#include <cuda_runtime_api.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <optional>
#include <random>
#include <set>

#include "gpu_test_support.hpp"
#include "nvdec_clip.hpp"
#include "zerohop/error.hpp"
#include "zerohop/gpu.hpp"
#include "zerohop/gpu_decode.hpp"

namespace zerohop {
namespace {

using test::Clip;
using test::loadClip;
using test::PlaneHashes;

class NvdecTest : public test::GpuTest {
 protected:
  void SetUp() override {
    GpuTest::SetUp();
    if (IsSkipped()) return;
    nvdec_ = probeNvdec(device_);
    if (!nvdec_.available) GTEST_SKIP() << "no NVDEC H.264 decoder: " << nvdec_.reason;
  }

  // Decodes `clip` unit by unit (as EncodedUnits with sequence 1000 + i), poisoning the target
  // before each call, and returns the frames' hashes in output order, flush included.
  // `onePerUnit`: every unit must give its frame back from the same call (no B-frames).
  std::vector<PlaneHashes> decodeAll(GpuH264Decoder& dec, const Clip& clip, bool onePerUnit) {
    BufferPool pool = test::nv12DevicePool(clip.width, clip.height, 2, makeDeviceAllocator(device_));
    std::vector<PlaneHashes> out;
    std::set<std::uint64_t> sequences;
    auto collect = [&](FrameLease& lease) {
      ::testing::AssertionResult padding = ::testing::AssertionSuccess();
      out.push_back(test::readBack(lease.frame(), device_, &padding));
      EXPECT_TRUE(padding) << clip.name << " frame " << out.size() - 1;
      EXPECT_NE(lease->gpu.readyEvent, nullptr);
      EXPECT_EQ(lease->gpu.device, device_);
      EXPECT_GT(lease->times.at(Stage::kConvert), 0);
      EXPECT_TRUE(sequences.insert(lease->sequence).second) << "sequence " << lease->sequence << " twice";
    };
    for (std::size_t i = 0; i < clip.units.size(); ++i) {
      FrameLease lease = std::move(*pool.tryAcquire());
      test::poison(lease.frame());
      EncodedUnit unit;
      unit.bytes = clip.units[i];
      unit.sequence = 1000 + i;
      unit.keyframe = i % 10 == 0;
      const bool produced = dec.decode(unit, lease.frame());
      if (onePerUnit) {
        EXPECT_TRUE(produced) << clip.name << " unit " << i << " gave no frame";
        if (produced) {
          EXPECT_EQ(lease->sequence, 1000 + i);
          EXPECT_EQ(lease->keyframe, unit.keyframe);
        }
      }
      if (produced) collect(lease);
    }
    for (;;) {
      FrameLease lease = std::move(*pool.tryAcquire());
      test::poison(lease.frame());
      if (!dec.flush(lease.frame())) break;
      EXPECT_FALSE(onePerUnit) << "a frame was held back in a stream without B-frames";
      collect(lease);
    }
    for (auto s : sequences) EXPECT_TRUE(s >= 1000 && s < 1000 + clip.units.size()) << s;
    return out;
  }

  void expectBitExact(const Clip& clip, bool onePerUnit) {
    ASSERT_EQ(clip.units.size(), 30u) << clip.name;
    ASSERT_EQ(clip.reference.size(), 30u) << clip.name;
    GpuH264Decoder dec(device_);
    const auto got = decodeAll(dec, clip, onePerUnit);
    EXPECT_EQ(dec.width(), clip.width);
    EXPECT_EQ(dec.height(), clip.height);
    EXPECT_EQ(dec.droppedPictures(), 0u);
    ASSERT_EQ(got.size(), clip.reference.size()) << clip.name;
    for (std::size_t i = 0; i < got.size(); ++i) {
      EXPECT_EQ(got[i].y, clip.reference[i].y) << clip.name << " frame " << i << " luma differs";
      EXPECT_EQ(got[i].uv, clip.reference[i].uv) << clip.name << " frame " << i << " chroma differs";
    }
  }

  NvdecInfo nvdec_;
};

TEST_F(NvdecTest, ProbeReportsH264WithItsLimits) {
  EXPECT_TRUE(nvdec_.reason.empty());
  EXPECT_GE(nvdec_.decoders, 1);
  EXPECT_GE(nvdec_.maxWidth, 1920u);
  EXPECT_GE(nvdec_.maxHeight, 1080u);
  EXPECT_GT(nvdec_.maxMacroblocks, 0u);
  EXPECT_LE(nvdec_.minWidth, 320u);
  std::printf("nvdec: %s (min %ux%u, %u macroblocks)\n", describe(nvdec_).c_str(), nvdec_.minWidth,
              nvdec_.minHeight, nvdec_.maxMacroblocks);
}

TEST_F(NvdecTest, ConstrainedBaselineIsBitExact) {
  expectBitExact(loadClip("nvdec_baseline_320x240", 320, 240), /*onePerUnit=*/true);
}

TEST_F(NvdecTest, HighProfileIsBitExact) {
  expectBitExact(loadClip("nvdec_high_640x480", 640, 480), /*onePerUnit=*/true);
}

TEST_F(NvdecTest, CroppedHdIsBitExact) {  // coded 1920x1088, displayed 1920x1080
  expectBitExact(loadClip("nvdec_high_1920x1080", 1920, 1080), /*onePerUnit=*/true);
}

TEST_F(NvdecTest, BFramesComeOutInDisplayOrder) {
  expectBitExact(loadClip("nvdec_high_bframes_640x480", 640, 480), /*onePerUnit=*/false);
}

TEST_F(NvdecTest, NewSequenceSizeRecreatesTheSession) {
  const Clip small = loadClip("nvdec_baseline_320x240", 320, 240);
  const Clip large = loadClip("nvdec_high_640x480", 640, 480);
  GpuH264Decoder dec(device_);
  BufferPool smallPool = test::nv12DevicePool(320, 240, 1, makeDeviceAllocator(device_));
  for (std::size_t i = 0; i < 5; ++i) {  // as a capture source delivers them: compressed Frames
    std::vector<std::uint8_t> bytes = small.units[i];
    Frame compressed;
    compressed.format = PixelFormat::kH264;
    compressed.data[0] = bytes.data();
    compressed.bytesUsed = bytes.size();
    compressed.sequence = 77 + i;
    compressed.wallClockMs = 1700000000000 + static_cast<std::int64_t>(i);
    compressed.times.mark(Stage::kCapture, 123 + static_cast<std::int64_t>(i));
    FrameLease f = std::move(*smallPool.tryAcquire());
    ASSERT_TRUE(dec.decode(compressed, f.frame()));
    EXPECT_EQ(test::readBack(f.frame(), device_), small.reference[i]) << "small frame " << i;
    EXPECT_EQ(f->sequence, 77 + i);
    EXPECT_EQ(f->wallClockMs, compressed.wallClockMs);
    EXPECT_EQ(f->captureNs(), 123 + static_cast<std::int64_t>(i));
  }
  const auto got = decodeAll(dec, large, /*onePerUnit=*/true);
  ASSERT_EQ(got.size(), large.reference.size());
  for (std::size_t i = 0; i < got.size(); ++i) EXPECT_EQ(got[i], large.reference[i]) << "large frame " << i;
}

// Decodes units one by one; a unit may throw zerohop::Error or give no frame, never crash. Returns
// the hash of each unit's frame (nullopt: error or none).
std::vector<std::optional<PlaneHashes>> decodeTolerant(GpuH264Decoder& dec, const std::vector<std::vector<std::uint8_t>>& units,
                                                       BufferPool& pool, int device, int& errors) {
  std::vector<std::optional<PlaneHashes>> out;
  for (const auto& unit : units) {
    FrameLease f = std::move(*pool.tryAcquire());
    test::poison(f.frame());
    try {
      if (dec.decode(unit.data(), unit.size(), f.frame())) {
        out.emplace_back(test::readBack(f.frame(), device));
        continue;
      }
    } catch (const Error& e) {
      ++errors;
      std::printf("unit %zu: %s\n", out.size(), e.what());
      EXPECT_FALSE(std::string(e.what()).empty());
    }
    out.emplace_back(std::nullopt);
  }
  return out;
}

TEST_F(NvdecTest, CorruptAndTruncatedUnitsRecoverAtTheNextIdr) {
  const Clip clip = loadClip("nvdec_baseline_320x240", 320, 240);
  ASSERT_EQ(clip.units.size(), 30u);
  auto units = clip.units;
  std::mt19937 rng(7);
  // Unit 3 (P): the second half of its slice data overwritten with noise.
  for (std::size_t i = units[3].size() / 2; i < units[3].size(); ++i) units[3][i] = static_cast<std::uint8_t>(rng());
  // Unit 13 (P): cut to a third. Unit 16: a slice NAL of pure noise. Unit 17: no start code at all.
  units[13].resize(units[13].size() / 3);
  units[16] = {0, 0, 0, 1, 0x41};
  for (int i = 0; i < 400; ++i) units[16].push_back(static_cast<std::uint8_t>(rng() | 1));
  units[17].assign(300, 0x5A);
  GpuH264Decoder dec(device_);
  BufferPool pool = test::nv12DevicePool(320, 240, 2, makeDeviceAllocator(device_));
  int errors = 0;
  const auto got = decodeTolerant(dec, units, pool, device_, errors);
  ASSERT_EQ(got.size(), units.size());
  std::printf("errors thrown: %d, frames: %zu\n", errors, std::count_if(got.begin(), got.end(), [](auto& g) { return g.has_value(); }));
  auto expectMatches = [&](std::size_t first, std::size_t last) {
    for (std::size_t i = first; i <= last; ++i) {
      ASSERT_TRUE(got[i].has_value()) << "unit " << i << " gave no frame";
      EXPECT_EQ(*got[i], clip.reference[i]) << "frame " << i << " differs from the reference";
    }
  };
  expectMatches(0, 2);    // before the damage
  expectMatches(10, 12);  // the IDR after unit 3 decodes cleanly again
  expectMatches(20, 29);  // and the IDR after units 13, 16, 17
}

TEST_F(NvdecTest, WrongDestinationIsRefusedAndThePictureWaits) {
  const Clip clip = loadClip("nvdec_baseline_320x240", 320, 240);
  GpuH264Decoder dec(device_);
  BufferPool hostPool(computeLayout(PixelFormat::kNV12, 320, 240, 256), 1, makeHostAllocator());
  FrameLease host = std::move(*hostPool.tryAcquire());
  // The message of the kInvalidArgument error decode() gives for `dst` ("" when it is accepted).
  auto refusal = [&](Frame& dst) -> std::string {
    try {
      dec.decode(clip.units[0].data(), clip.units[0].size(), dst);
    } catch (const Error& e) {
      EXPECT_EQ(e.code(), Errc::kInvalidArgument) << e.what();
      return e.what();
    }
    return {};
  };
  EXPECT_NE(refusal(host.frame()), "") << "a host destination was accepted";
  BufferPool wrongPool = test::nv12DevicePool(640, 480, 1, makeDeviceAllocator(device_));
  FrameLease wrong = std::move(*wrongPool.tryAcquire());
  EXPECT_NE(refusal(wrong.frame()).find("320x240"), std::string::npos)
      << "a 640x480 destination was accepted for a 320x240 stream, or the message lacks the stream's size";
  BufferPool pool = test::nv12DevicePool(320, 240, 1, makeDeviceAllocator(device_));
  FrameLease right = std::move(*pool.tryAcquire());
  test::poison(right.frame());
  ASSERT_TRUE(dec.decode(nullptr, 0, right.frame())) << "the queued picture was lost";
  EXPECT_EQ(test::readBack(right.frame(), device_), clip.reference[0]);
}

TEST_F(NvdecTest, ManyDecodersComeAndGoWithoutLeaking) {
  const Clip clip = loadClip("nvdec_high_1920x1080", 1920, 1080);
  BufferPool pool = test::nv12DevicePool(1920, 1080, 1, makeDeviceAllocator(device_));
  FrameLease f = std::move(*pool.tryAcquire());
  auto cycle = [&] {
    GpuH264Decoder dec(device_);
    for (std::size_t i = 0; i < 5; ++i) ASSERT_TRUE(dec.decode(clip.units[i].data(), clip.units[i].size(), f.frame()));
  };  // destroyed with a surface still mapped
  cycle();  // first use initialises the context and the decoder library
  std::size_t freeBefore = 0, freeAfter = 0, total = 0;
  cuda::check(cudaMemGetInfo(&freeBefore, &total), "cudaMemGetInfo");
  for (int i = 0; i < 8; ++i) cycle();
  cuda::check(cudaMemGetInfo(&freeAfter, &total), "cudaMemGetInfo");
  EXPECT_LE(freeBefore - std::min(freeBefore, freeAfter), std::size_t{16} << 20)
      << "device memory went from " << freeBefore << " to " << freeAfter << " free bytes";
}

}  // namespace
}  // namespace zerohop
