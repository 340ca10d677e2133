// GpuConverter's RGBA outputs and its crop + scale path against the CPU reference
// (cpu_reference.hpp states the rules: bilinear, pixel centres aligned, each plane on its own grid;
// YUV -> RGBA chroma upsampled by the same rule). Every ingest path, fresh random and camera-like
// content, odd sizes and pitches (rows longer than their pixels by amounts not a multiple of 4,
// planes at odd addresses), outputs poisoned before each run (0xCD, then 0x5A) and their padding
// checked untouched.
// Tolerance: +-1 per byte wherever a value is computed (float on the GPU, double in the reference:
// bilinear weights, RGB <-> YUV matrices); 0 for copies (same format, RGB24/BGRx -> RGBA at the same
// size) and for YUV -> YUV crops without scaling (they take the exact kernels).
#include <gtest/gtest.h>

#include <optional>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "convert_test_support.hpp"
#include "gpu_test_support.hpp"
#include "zerohop/error.hpp"
#include "zerohop/gpu_convert.hpp"

namespace zerohop::test {
namespace {

bool is420(PixelFormat f) {
  return f == PixelFormat::kNV12 || f == PixelFormat::kI420;
}

/// One request: a source of srcW x srcH (rows srcExtra bytes longer), an optional crop, a destination
/// of dstW x dstH (rows dstExtra bytes longer); planes of both `shift` bytes past a 256-byte boundary.
struct Job {
  PixelFormat src, dst;
  std::uint32_t srcW, srcH;
  std::optional<Region> crop;
  std::uint32_t dstW, dstH;
  std::uint32_t srcExtra = 0, dstExtra = 0, shift = 0;
};

std::string describe(const Job& j) {
  std::ostringstream os;
  os << formatName(j.src) << " " << j.srcW << "x" << j.srcH << " +" << j.srcExtra;
  if (j.crop)
    os << " crop (" << j.crop->x << "," << j.crop->y << " " << j.crop->width << "x" << j.crop->height << ")";
  os << " -> " << formatName(j.dst) << " " << j.dstW << "x" << j.dstH << " +" << j.dstExtra << " shift "
     << j.shift;
  return os.str();
}

// How GoogleTest names a Job in test names and messages.
void PrintTo(const Job& j, std::ostream* os) {
  *os << describe(j);
}

std::string describe(const Ingest& in) {
  return std::string(memoryKindName(in.memory)) + "/" + ingestModeName(in.mode);
}

/// The three converters a test needs, one per ingest mode.
struct Converters {
  explicit Converters(int device)
      : copy(device, IngestMode::kCopy),
        zeroCopy(device, IngestMode::kZeroCopy),
        pipelined(device, IngestMode::kPipelinedCopy, 3) {}
  GpuConverter& forMode(IngestMode m) {
    return m == IngestMode::kZeroCopy ? zeroCopy : m == IngestMode::kPipelinedCopy ? pipelined : copy;
  }
  GpuConverter copy, zeroCopy, pipelined;
};

/// What the GPU must produce for `job` on `image`, and the tolerance (see the top of this file).
HostImage expected(const Job& j, const HostImage& image, const ColorDesc& color, int& tolerance) {
  const HostImage region = j.crop ? cropImage(image, *j.crop) : image;
  const bool scaled = region.width != j.dstW || region.height != j.dstH;
  if (!scaled && (is420(j.dst) || j.dst == j.src)) {
    tolerance = isRgb(j.src) && j.dst != j.src ? 1 : 0;
    return referenceConvert(region, j.dst, color);
  }
  tolerance = scaled || !isRgb(j.src) ? 1 : 0;
  return referenceResample(region, j.dst, j.dstW, j.dstH, color);
}

::testing::AssertionResult runJob(Converters& convs, int device, const Job& j, const HostImage& image,
                                  const Ingest& in, const ColorDesc& color) {
  PlacedFrame src(image, in.memory, device, j.shift);
  src.frame.color = color;  // YUV sources: the matrix of their YUV -> RGBA conversion
  src.frame.sequence = 5;
  DeviceTarget target(j.dst, j.dstW, j.dstH, j.dstExtra, device, j.shift);
  int tolerance = 0;
  const HostImage ref = expected(j, image, color, tolerance);
  ConvertOptions options;
  if (j.crop) options.crop = PixelRect{j.crop->x, j.crop->y, j.crop->width, j.crop->height};
  for (std::uint8_t poison : kPoisons) {
    target.poison(poison);
    target.frame.color = color;  // RGB sources: the matrix of their RGB -> YUV conversion
    convs.forMode(in.mode).convert(src.frame, target.frame, options);
    if (!target.frame.gpu.readyEvent) return ::testing::AssertionFailure() << "no ready event in dst";
    cuda::check(cudaEventSynchronize(static_cast<cudaEvent_t>(target.frame.gpu.readyEvent)),
                "cudaEventSynchronize");
    auto r = matchesReference(target.download(), ref, tolerance, poison);
    if (!r) return r << " (poison " << int(poison) << ", tolerance " << tolerance << ")";
    if (target.frame.sequence != 5) return ::testing::AssertionFailure() << "sequence not carried";
    if (!(target.frame.color == color)) return ::testing::AssertionFailure() << "colour description changed";
  }
  return ::testing::AssertionSuccess();
}

/// Runs `job` on random and camera-like content, through `ingests`, in `colors`; reports the first
/// ten failing cases and the count.
void runAll(int device, const Job& job, const std::vector<Ingest>& ingests,
            const std::vector<ColorDesc>& colors) {
  Converters convs(device);
  const unsigned seed = freshSeed();
  std::mt19937 rng(seed);
  int cases = 0, failures = 0;
  for (bool camera : {false, true}) {
    HostImage image = makeImage(job.src, job.srcW, job.srcH, job.srcExtra);
    if (camera)
      fillCameraLike(image, rng);
    else
      fillRandom(image, rng);
    for (const auto& in : ingests) {
      for (const auto& color : colors) {
        ++cases;
        auto result = runJob(convs, device, job, image, in, color);
        if (!result && ++failures <= 10) {
          ADD_FAILURE() << describe(job) << " " << describe(in) << (camera ? " camera" : " random") << " "
                        << (color.matrix == ColorMatrix::kBt709 ? "bt709" : "bt601") << "/"
                        << (color.range == ColorRange::kFull ? "full" : "limited") << " seed " << seed << ": "
                        << result.message();
        }
      }
    }
  }
  EXPECT_EQ(failures, 0) << failures << " of " << cases << " cases failed (seed " << seed << ")";
}

std::vector<ColorDesc> colorsFor(PixelFormat src, PixelFormat dst) {
  // The matrix matters for YUV -> RGBA and RGB -> YUV only.
  if (isRgb(src) == isRgb(dst) || (isRgb(src) && dst == PixelFormat::kRGBA)) return {kColors[0]};
  return {std::begin(kColors), std::end(kColors)};
}

// ---- Same-size RGBA outputs: every source format, every ingest path, all four matrices.

class GpuToRgba : public GpuTest, public ::testing::WithParamInterface<PixelFormat> {};

TEST_P(GpuToRgba, MatchesCpuReference) {
  const PixelFormat src = GetParam();
  ASSERT_TRUE(GpuConverter::supports(src, PixelFormat::kRGBA));
  std::vector<Job> jobs = {{src, PixelFormat::kRGBA, 2, 2, std::nullopt, 2, 2},
                           {src, PixelFormat::kRGBA, 34, 18, std::nullopt, 34, 18, 3, 5, 1},
                           {src, PixelFormat::kRGBA, 642, 362, std::nullopt, 642, 362, 70, 6, 0},
                           {src, PixelFormat::kRGBA, 130, 66, std::nullopt, 130, 66}};
  if (isRgb(src))
    jobs.push_back({src, PixelFormat::kRGBA, 33, 17, std::nullopt, 33, 17, 5, 3, 1});  // odd size
  for (const auto& job : jobs) {
    runAll(device_, job, {std::begin(kIngests), std::end(kIngests)}, colorsFor(src, PixelFormat::kRGBA));
  }
}

INSTANTIATE_TEST_SUITE_P(Formats, GpuToRgba,
                         ::testing::Values(PixelFormat::kYUYV, PixelFormat::kUYVY, PixelFormat::kNV12,
                                           PixelFormat::kI420, PixelFormat::kRGB24, PixelFormat::kBGRx,
                                           PixelFormat::kRGBA),
                         [](const auto& param) { return std::string(formatName(param.param)); });

// ---- Crop and scale.

std::vector<Job> scaleJobs() {
  using P = PixelFormat;
  std::vector<Job> jobs;
  // Camera sizes: 1080p down to 720p and 360p, 360p up to 720p.
  for (auto [src, dst] :
       {std::pair{P::kNV12, P::kNV12}, std::pair{P::kNV12, P::kRGBA}, std::pair{P::kYUYV, P::kNV12}}) {
    jobs.push_back({src, dst, 1920, 1080, std::nullopt, 1280, 720});
    jobs.push_back({src, dst, 1920, 1080, std::nullopt, 640, 360, 0, 20});
    jobs.push_back({src, dst, 640, 360, std::nullopt, 1280, 720, 6, 0});
  }
  // Crops at the edges, with scaling.
  jobs.push_back(
      {P::kNV12, P::kNV12, 1920, 1080, Region{1280, 720, 640, 360}, 1280, 720});  // bottom right, 2x up
  jobs.push_back(
      {P::kNV12, P::kRGBA, 1920, 1080, Region{0, 0, 960, 540}, 641, 361, 0, 7});  // top left, odd dst
  jobs.push_back({P::kYUYV, P::kNV12, 1920, 1080, Region{1600, 0, 320, 1080}, 160, 540, 10});  // right edge
  jobs.push_back(
      {P::kYUYV, P::kNV12, 642, 362, Region{2, 1, 640, 361}, 320, 180, 70, 3, 1});   // odd y, height
  jobs.push_back({P::kNV12, P::kRGBA, 1920, 1080, Region{1918, 1078, 2, 2}, 9, 7});  // last 2x2, 4.5x up
  jobs.push_back({P::kNV12, P::kNV12, 1920, 1080, std::nullopt, 2, 2});              // 960x down
  jobs.push_back({P::kNV12, P::kNV12, 4, 4, std::nullopt, 10, 6, 3, 1, 1});          // tiny up
  // Every source format into every scaled destination: odd pitches, planes at odd addresses.
  for (auto src : {P::kYUYV, P::kUYVY, P::kNV12, P::kI420, P::kRGB24, P::kBGRx, P::kRGBA}) {
    for (auto dst : {P::kNV12, P::kI420})
      jobs.push_back({src, dst, 130, 66, Region{4, 2, 120, 60}, 94, 46, 3, 5, 1});
    jobs.push_back({src, P::kRGBA, 130, 66, Region{4, 2, 120, 60}, 95, 47, 3, 5, 1});
    jobs.push_back(
        {src, P::kRGBA, 130, 66, Region{126, 0, 4, 66}, 13, 100, 3, 2, 1});  // right edge strip, up
  }
  // Crops without scaling: the exact kernels / copies reading at an offset.
  jobs.push_back({P::kNV12, P::kNV12, 130, 66, Region{2, 2, 64, 32}, 64, 32, 3, 5, 1});
  jobs.push_back({P::kNV12, P::kI420, 130, 66, Region{66, 34, 64, 32}, 64, 32, 3, 5, 1});
  jobs.push_back({P::kI420, P::kNV12, 130, 66, Region{0, 32, 130, 34}, 130, 34, 3, 0, 1});
  jobs.push_back({P::kYUYV, P::kNV12, 642, 362, Region{100, 50, 400, 300}, 400, 300, 70});
  jobs.push_back({P::kYUYV, P::kI420, 642, 362, Region{0, 0, 642, 362}, 642, 362, 70});
  jobs.push_back({P::kRGB24, P::kRGB24, 130, 66, Region{3, 5, 101, 33}, 101, 33, 3, 5, 1});
  jobs.push_back({P::kBGRx, P::kNV12, 130, 66, Region{3, 5, 100, 32}, 100, 32, 3, 5, 1});
  jobs.push_back({P::kUYVY, P::kRGBA, 130, 66, Region{2, 3, 100, 33}, 100, 33, 3, 5, 1});
  return jobs;
}

class GpuScale : public GpuTest, public ::testing::WithParamInterface<Job> {};

TEST_P(GpuScale, MatchesCpuReference) {
  const Job& job = GetParam();
  const bool big = job.srcW * job.srcH > 1000000;
  // Big frames: pinned copy, zero-copy and device (the pageable and banded paths are the copy path's).
  std::vector<Ingest> ingests = big ? std::vector<Ingest>{{MemoryKind::kPinned, IngestMode::kCopy},
                                                          {MemoryKind::kPinned, IngestMode::kZeroCopy},
                                                          {MemoryKind::kDevice, IngestMode::kCopy}}
                                    : std::vector<Ingest>(std::begin(kIngests), std::end(kIngests));
  std::vector<ColorDesc> colors = colorsFor(job.src, job.dst);
  if (big && colors.size() > 1) colors = {kColors[2], kColors[1]};  // BT.709 limited, BT.601 full
  runAll(device_, job, ingests, colors);
}

INSTANTIATE_TEST_SUITE_P(Jobs, GpuScale, ::testing::ValuesIn(scaleJobs()), [](const auto& param) {
  const Job& j = param.param;
  std::string name =
      std::string(formatName(j.src)) + "_" + std::to_string(j.srcW) + "x" + std::to_string(j.srcH);
  if (j.crop) {
    name += "_crop" + std::to_string(j.crop->x) + "_" + std::to_string(j.crop->y) + "_" +
            std::to_string(j.crop->width) + "x" + std::to_string(j.crop->height);
  }
  return name + "_to_" + std::string(formatName(j.dst)) + "_" + std::to_string(j.dstW) + "x" +
         std::to_string(j.dstH) + "_" + std::to_string(param.index);
});

TEST_F(GpuScale, RefusesBadRequestsAndWritesNothing) {
  std::mt19937 rng(freshSeed());
  PlacedFrame src(randomImage(PixelFormat::kNV12, 64, 32, rng), MemoryKind::kDevice, device_);
  PlacedFrame rgbSrc(randomImage(PixelFormat::kRGB24, 64, 32, rng), MemoryKind::kDevice, device_);
  DeviceTarget target(PixelFormat::kNV12, 32, 16, 0, device_);
  DeviceTarget rgbSmaller(PixelFormat::kRGB24, 32, 16, 0, device_);
  target.poison(0xCD);
  GpuConverter conv(device_);
  auto crop = [](std::uint32_t x, std::uint32_t y, std::uint32_t w, std::uint32_t h) {
    ConvertOptions o;
    o.crop = PixelRect{x, y, w, h};
    return o;
  };
  auto refused = [&](const std::string& needle, const ConvertOptions& options, Frame& dst) {
    expectRefusal(Errc::kInvalidArgument, needle, [&] { conv.convert(src.frame, dst, options); });
  };
  refused("odd crop", crop(1, 0, 32, 16), target.frame);
  refused("odd crop", crop(0, 3, 32, 16), target.frame);
  refused("outside", crop(34, 0, 32, 16), target.frame);
  refused("outside", crop(0, 18, 32, 16), target.frame);
  refused("zero size", crop(0, 0, 0, 16), target.frame);
  Frame empty = target.frame;
  empty.height = 0;
  refused("zero size", {}, empty);
  expectRefusal(Errc::kInvalidArgument, "cannot scale",
                [&] { conv.convert(rgbSrc.frame, rgbSmaller.frame, ConvertOptions{}); });
  // Without options a different size is still a mistake, not a request to scale.
  expectRefusal(Errc::kInvalidArgument, "size mismatch", [&] { conv.convert(src.frame, target.frame); });
  cuda::check(cudaStreamSynchronize(static_cast<cudaStream_t>(conv.stream())), "cudaStreamSynchronize");
  const HostImage untouched = target.download();
  for (std::uint32_t p = 0; p < untouched.planeCount; ++p)
    for (std::uint8_t b : untouched.plane[p]) ASSERT_EQ(b, 0xCD) << "a refused request wrote plane " << p;
}

// ---- The reference itself (no GPU): hand-computed values and agreement with referenceConvert.

TEST(CpuReference, BilinearRuleByHand) {
  HostImage im = makeImage(PixelFormat::kNV12, 4, 2);
  const std::uint8_t row[4] = {0, 100, 200, 250};
  for (std::uint32_t y = 0; y < 2; ++y)
    for (std::uint32_t x = 0; x < 4; ++x) im.at(0, x, y) = row[x];
  for (std::uint32_t x = 0; x < 4; ++x) im.at(1, x, 0) = 128;
  // 4 -> 2: positions 0.5 and 2.5 -> 50 and 225.
  const HostImage down = referenceResample(im, PixelFormat::kNV12, 2, 2, {});
  EXPECT_EQ(down.at(0, 0, 0), 50);
  EXPECT_EQ(down.at(0, 1, 1), 225);
  // 4 -> 8: positions -0.25 (clamped to 0), 0.25, 0.75, 1.25, ..., 3.25 (clamped to 3).
  const HostImage up = referenceResample(im, PixelFormat::kNV12, 8, 2, {});
  const int want[8] = {0, 25, 75, 125, 175, 213, 238, 250};  // 212.5 and 237.5 round half up
  for (std::uint32_t x = 0; x < 8; ++x) EXPECT_EQ(up.at(0, x, 0), want[x]) << "x " << x;
  // Grey (Y 126, Cb = Cr = 128) is grey in RGB: limited (126 - 16) * 255 / 219 = 128.08 -> 128.
  HostImage grey = makeImage(PixelFormat::kI420, 2, 2);
  for (auto& plane : grey.plane) std::fill(plane.begin(), plane.end(), 128);
  grey.at(0, 0, 0) = 126;
  const HostImage rgba =
      referenceResample(grey, PixelFormat::kRGBA, 1, 1, {ColorMatrix::kBt709, ColorRange::kLimited});
  // 1x1 from 2x2: luma (126 + 128 * 3) / 4 = 127.5 -> Y' = (127.5 - 16) * 255 / 219 = 129.83 -> 130.
  EXPECT_EQ(rgba.at(0, 0, 0), 130);
  EXPECT_EQ(rgba.at(0, 1, 0), 130);
  EXPECT_EQ(rgba.at(0, 2, 0), 130);
  EXPECT_EQ(rgba.at(0, 3, 0), 255);
}

TEST(CpuReference, ResampleAtTheSameSizeIsTheConversion) {
  std::mt19937 rng(freshSeed());
  for (auto src : {PixelFormat::kYUYV, PixelFormat::kUYVY, PixelFormat::kNV12, PixelFormat::kI420,
                   PixelFormat::kRGB24, PixelFormat::kBGRx, PixelFormat::kRGBA}) {
    HostImage image = makeImage(src, 34, 18, 3);
    fillCameraLike(image, rng);
    for (auto dst : {PixelFormat::kNV12, PixelFormat::kI420}) {
      const ColorDesc color{ColorMatrix::kBt709, ColorRange::kLimited};
      EXPECT_TRUE(matchesReference(referenceResample(image, dst, 34, 18, color),
                                   referenceConvert(image, dst, color), 0, 0))
          << formatName(src) << " -> " << formatName(dst);
    }
  }
}

}  // namespace
}  // namespace zerohop::test
