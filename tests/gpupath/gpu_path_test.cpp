// serve's GPU path (label gpu): source frames in page-locked memory become NV12 in VRAM, equal byte
// for byte to the CPU reference; the host copy for x264, and the one downloadLast() makes on demand for
// the VP8 encode beside NVENC, equal it too; with a share name, a reader in
// another process gets the same bytes out of the device ring, in place.
#include "gpupath/gpu_path.hpp"

#include <gtest/gtest.h>
#include <stdlib.h>

#include <map>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "beside_program.hpp"
#include "../gpu/gpu_test_support.hpp"
#include "../share/share_test_support.hpp"
#include "beside_program.hpp"
#include "gpu_path_hash.hpp"
#include "zerohop/error.hpp"

namespace zerohop {
namespace {

using namespace std::chrono_literals;
using Planes = std::vector<std::vector<std::uint8_t>>;

Planes tight(const test::HostImage& im) {
  Planes out(im.planeCount);
  for (std::uint32_t p = 0; p < im.planeCount; ++p) {
    for (std::uint32_t y = 0; y < im.rows[p]; ++y) {
      const auto* row = im.plane[p].data() + std::size_t{y} * im.pitch[p];
      out[p].insert(out[p].end(), row, row + im.rowBytes[p]);
    }
  }
  return out;
}

// NV12 planes of `f` without pitch padding; device frames are read after their ready event.
Planes tight(const Frame& f) {
  Planes out(f.planeCount);
  if (f.memory == MemoryKind::kDevice) {
    cuda::check(cudaEventSynchronize(static_cast<cudaEvent_t>(f.gpu.readyEvent)), "cudaEventSynchronize(ready)");
  }
  for (std::uint32_t p = 0; p < f.planeCount; ++p) {
    const std::uint32_t rows = p == 0 ? f.height : f.height / 2;
    out[p].resize(std::size_t{f.width} * rows);
    cuda::check(cudaMemcpy2D(out[p].data(), f.width, f.data[p], f.pitch[p], f.width, rows, cudaMemcpyDefault),
                "cudaMemcpy2D(test read)");
  }
  return out;
}

::testing::AssertionResult samePlanes(const Planes& got, const Planes& want) {
  if (got.size() != want.size()) return ::testing::AssertionFailure() << got.size() << " planes, want " << want.size();
  for (std::size_t p = 0; p < want.size(); ++p) {
    if (got[p].size() != want[p].size()) return ::testing::AssertionFailure() << "plane " << p << " size differs";
    for (std::size_t i = 0; i < want[p].size(); ++i) {
      if (got[p][i] != want[p][i]) {
        return ::testing::AssertionFailure() << "plane " << p << " byte " << i << ": got " << int(got[p][i])
                                             << ", want " << int(want[p][i]);
      }
    }
  }
  return ::testing::AssertionSuccess();
}

class GpuPathFormat : public test::GpuTest, public ::testing::WithParamInterface<PixelFormat> {};

// One camera-like frame of `format` through `path` from pinned memory; the source (kept alive with the
// result, as the upload may still run) and its image for the reference come back with the output.
struct Processed {
  test::HostImage image;
  std::unique_ptr<test::PlacedFrame> source;
  GpuPathOutput out;
};
Processed processOne(GpuFramePath& path, PixelFormat format, std::uint32_t w, std::uint32_t h, std::mt19937& rng,
                     std::uint64_t seq, std::int64_t captureNs, int device) {
  Processed r{test::makeImage(format, w, h), nullptr, {}};
  test::fillCameraLike(r.image, rng);
  r.source = std::make_unique<test::PlacedFrame>(r.image, MemoryKind::kPinned, device);
  r.source->frame.sequence = seq;
  r.source->frame.times.mark(Stage::kCapture, captureNs);
  r.out = path.process(r.source->frame);
  return r;
}

TEST_P(GpuPathFormat, DeviceFrameAndHostCopyEqualTheCpuReference) {
  const PixelFormat format = GetParam();
  constexpr std::uint32_t w = 1280, h = 720;
  GpuFramePath path({device_, format, w, h, "", 8, "", /*hostCopy=*/true});
  std::mt19937 rng(7);
  for (std::uint64_t seq = 1; seq <= 3; ++seq) {
    const Processed p = processOne(path, format, w, h, rng, seq, 1000 + static_cast<std::int64_t>(seq), device_);
    const GpuPathOutput& out = p.out;
    ASSERT_NE(out.device, nullptr);
    ASSERT_NE(out.host, nullptr);
    EXPECT_EQ(out.device->memory, MemoryKind::kDevice);
    EXPECT_EQ(out.device->format, PixelFormat::kNV12);
    EXPECT_EQ(out.host->memory, MemoryKind::kPinned);
    EXPECT_EQ(out.host->sequence, seq);
    EXPECT_EQ(out.host->times.at(Stage::kCapture), 1000 + static_cast<std::int64_t>(seq));
    EXPECT_GE(out.host->times.at(Stage::kConvert), out.host->times.at(Stage::kIngest));
    const Planes want = tight(test::referenceConvert(p.image, PixelFormat::kNV12, ColorDesc{}));
    EXPECT_TRUE(samePlanes(tight(*out.host), want)) << formatName(format) << " host copy, frame " << seq;
    EXPECT_TRUE(samePlanes(tight(*out.device), want)) << formatName(format) << " device frame, frame " << seq;
  }
}

// Beside NVENC (no hostCopy) the VP8 encode asks for a host copy of a frame only while a VP8 viewer
// watches: downloadLast() gives the frame process() just wrote, byte for byte, with its metadata;
// process() alone never makes one (out.host stays null), and without a frame there is a clear error.
TEST_P(GpuPathFormat, DownloadLastCopiesTheFrameJustWrittenOnlyWhenAsked) {
  const PixelFormat format = GetParam();
  constexpr std::uint32_t w = 640, h = 360;
  GpuFramePath path({device_, format, w, h, "", 8, "", /*hostCopy=*/false});
  EXPECT_THROW(path.downloadLast(), Error) << "no frame processed yet";
  std::mt19937 rng(11);
  for (std::uint64_t seq = 1; seq <= 3; ++seq) {
    const Processed p = processOne(path, format, w, h, rng, seq, 500 + static_cast<std::int64_t>(seq), device_);
    const GpuPathOutput& out = p.out;
    ASSERT_NE(out.device, nullptr);
    EXPECT_EQ(out.host, nullptr) << "process() downloaded without hostCopy";
    if (seq == 2) continue;  // a frame no VP8 viewer wanted: never downloaded
    const Frame& host = path.downloadLast();
    EXPECT_EQ(&path.downloadLast(), &host) << "asked twice for one frame: one copy";
    EXPECT_EQ(host.memory, MemoryKind::kPinned);
    EXPECT_EQ(host.format, PixelFormat::kNV12);
    EXPECT_EQ(host.sequence, seq);
    EXPECT_EQ(host.times.at(Stage::kCapture), out.device->times.at(Stage::kCapture));
    EXPECT_EQ(host.times.at(Stage::kConvert), out.device->times.at(Stage::kConvert));
    const Planes want = tight(test::referenceConvert(p.image, PixelFormat::kNV12, ColorDesc{}));
    EXPECT_TRUE(samePlanes(tight(host), want)) << formatName(format) << " download, frame " << seq;
  }
}

INSTANTIATE_TEST_SUITE_P(Sources, GpuPathFormat,
                         ::testing::Values(PixelFormat::kYUYV, PixelFormat::kUYVY, PixelFormat::kNV12, PixelFormat::kI420),
                         [](const auto& p) { return std::string(formatName(p.param)); });

using GpuPathTest = test::GpuTest;

TEST_F(GpuPathTest, AReaderInAnotherProcessReadsTheSameBytesFromTheDeviceShare) {
  char dirTemplate[] = "/tmp/zerohop-gpupath-XXXXXX";
  ASSERT_NE(::mkdtemp(dirTemplate), nullptr);
  const std::string dir = dirTemplate;
  constexpr std::uint32_t w = 640, h = 480;
  GpuFramePath path({device_, PixelFormat::kYUYV, w, h, "gpupath", 8, dir, /*hostCopy=*/false});
  EXPECT_NE(path.describe().find("device share 'gpupath'"), std::string::npos) << path.describe();
  share_test::Child peer({zerohop::testing::besideProgram(ZEROHOP_GPU_PATH_PEER), "gpupath", dir, "5"});

  std::map<std::uint64_t, std::uint64_t> expected;
  std::mt19937 rng(11);
  int matched = 0;
  bool done = false;
  for (std::uint64_t seq = 1; seq <= 500 && !done; ++seq) {
    test::HostImage im = test::makeImage(PixelFormat::kYUYV, w, h);
    test::fillCameraLike(im, rng);
    test::PlacedFrame src(im, MemoryKind::kPinned, device_);
    src.frame.sequence = seq;
    path.process(src.frame);
    expected[seq] = test::hashPlanes(tight(test::referenceConvert(im, PixelFormat::kNV12, ColorDesc{})));
    while (auto line = peer.readLine(10ms)) {
      if (*line == "done") {
        done = true;
        break;
      }
      std::uint64_t gotSeq = 0, gotHash = 0;
      ASSERT_EQ(std::sscanf(line->c_str(), "%lu %lu", &gotSeq, &gotHash), 2) << "peer said: " << *line;
      ASSERT_TRUE(expected.count(gotSeq)) << "peer read a frame never published: " << *line;
      EXPECT_EQ(gotHash, expected[gotSeq]) << "frame " << gotSeq << " differs in the reader";
      ++matched;
    }
  }
  EXPECT_TRUE(done) << "the reader did not finish";
  EXPECT_GE(matched, 1);
  EXPECT_EQ(peer.wait(), 0);
}

TEST_F(GpuPathTest, FormatsAndSizesItCannotConvertAreRefusedWithTheReason) {
  try {
    GpuFramePath path({device_, PixelFormat::kH264, 640, 480, "", 8, "", false});
    ADD_FAILURE() << "H.264 accepted";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), Errc::kInvalidArgument);
    EXPECT_NE(std::string(e.what()).find("set gpu to \"off\""), std::string::npos) << e.what();
  }
  try {
    GpuFramePath path({device_, PixelFormat::kYUYV, 641, 480, "", 8, "", false});
    ADD_FAILURE() << "odd width accepted";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), Errc::kInvalidArgument);
  }
}

TEST_F(GpuPathTest, AutoChoosesTheGpuForRawFormats) {
  const GpuPathChoice c = choosePath("auto", PixelFormat::kYUYV);
  EXPECT_TRUE(c.useGpu) << c.reason;
  EXPECT_EQ(c.device, device_);
}

}  // namespace
}  // namespace zerohop
