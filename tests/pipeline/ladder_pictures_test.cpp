// The pictures of a camera's ladder of renditions, decoded: a pipeline on the test camera at 640x360
// with renditions 1:600-1500,2:200-600,4:100-300 (full, 1/2, 1/4 size) and a sink that takes every
// rung of one codec (so rungs 1 and 2 run): H.264, and VP8 (the ladder Firefox viewers get, encoded only
// while a sink wants it). Each lower rung's units decode (libavcodec) to the rung's own size, and its picture
// of a frame is rung 0's decoded picture of the same frame scaled down (median luma PSNR >= 28 dB: both went
// through x264), and not of another (against rung 0's picture of the frame 10 later, 8 dB less at least: a
// black, shifted, stretched or mis-stamped picture fails). Built twice from this file: label media on the CPU
// path (libyuv scale), label gpu on the GPU path (ZEROHOP_LADDER_ON_GPU: CUDA scale from the device frame,
// x264 from a host copy of each scaled picture), which skips saying why where no CUDA device works.
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "encode/h264_test_decoder.hpp"
#include "zerohop/pipeline.hpp"
#ifdef ZEROHOP_LADDER_ON_GPU
#include "zerohop/gpu.hpp"
#endif

namespace zerohop {
namespace {

using namespace std::chrono_literals;

#ifdef ZEROHOP_LADDER_ON_GPU
constexpr const char* kPath = "gpu";
#else
constexpr const char* kPath = "cpu";
#endif
constexpr std::size_t kRungs = 3;
constexpr std::size_t kUnitsPerRung = 20;

/// Takes every rung's units of one codec, as a sink whose receivers sit on every rung would.
class EveryRung final : public UnitSink {
 public:
  explicit EveryRung(Codec codec) : codec_(codec) {}
  void deliver(const EncodedUnitPtr& unit) override {
    std::lock_guard lock(mutex_);
    if (unit->codec == codec_ && unit->rendition < kRungs) units_[unit->rendition].push_back(unit);
  }
  std::string describe() const override { return "every rung (test)"; }
  bool wants(TrackKey track) const override { return track.codec == codec_ && track.rung < kRungs; }

  std::size_t fewest() const {
    std::lock_guard lock(mutex_);
    std::size_t n = SIZE_MAX;
    for (const auto& units : units_) n = std::min(n, units.size());
    return n;
  }
  std::vector<EncodedUnitPtr> of(std::size_t rung) const {
    std::lock_guard lock(mutex_);
    return units_[rung];
  }

 private:
  const Codec codec_;
  mutable std::mutex mutex_;
  std::array<std::vector<EncodedUnitPtr>, kRungs> units_;
};

/// A decoded picture's luma, tight.
struct Luma {
  int width = 0, height = 0;
  std::vector<std::uint8_t> y;
};

/// Decodes one rung's units in order (its first is an IDR); pictures by source frame sequence.
std::map<std::uint64_t, Luma> decodeRung(const std::vector<EncodedUnitPtr>& units, Codec codec) {
  testing::H264TestDecoder decoder(codec == Codec::kVP8 ? AV_CODEC_ID_VP8 : AV_CODEC_ID_H264);
  std::map<std::uint64_t, Luma> pictures;
  for (const EncodedUnitPtr& unit : units) {
    for (const auto& f : decoder.decode(*unit)) {
      Luma l{f->width, f->height, {}};
      for (int row = 0; row < f->height; ++row) {
        const std::uint8_t* p = f->data[0] + static_cast<std::ptrdiff_t>(row) * f->linesize[0];
        l.y.insert(l.y.end(), p, p + f->width);
      }
      pictures[unit->sequence] = std::move(l);
    }
  }
  return pictures;
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

/// `big` box-averaged down to `small`'s size, against `small`: luma PSNR in dB.
double psnrScaled(const Luma& big, const Luma& small) {
  const int fx = big.width / small.width, fy = big.height / small.height;
  double se = 0;
  for (int y = 0; y < small.height; ++y) {
    for (int x = 0; x < small.width; ++x) {
      int sum = 0;
      for (int dy = 0; dy < fy; ++dy) {
        for (int dx = 0; dx < fx; ++dx) sum += big.y[static_cast<std::size_t>(y * fy + dy) * big.width + x * fx + dx];
      }
      const double d = static_cast<double>(sum) / (fx * fy) - small.y[static_cast<std::size_t>(y) * small.width + x];
      se += d * d;
    }
  }
  const double mse = se / (static_cast<double>(small.width) * small.height);
  return mse == 0 ? 99.0 : 10.0 * std::log10(255.0 * 255.0 / mse);
}

class LadderPictures : public ::testing::TestWithParam<Codec> {};

TEST_P(LadderPictures, EachLowerRungIsTheSameFrameScaledToItsSize) {
  const Codec codec = GetParam();
  PipelineConfig config;
  config.source = parseSourceSpec("test:640x360@30");
  config.encoder.encoder = "x264";
  config.encoder.bitrateKbps = 1500;
  config.renditions = "1:600-1500,2:200-600,4:100-300";
  config.stream.port = 0;
  config.stream.warmUp = false;
#ifdef ZEROHOP_LADDER_ON_GPU
  const GpuInfo gpu = probeGpu();
  if (!gpu.available) GTEST_SKIP() << "no CUDA device: " << gpu.reason;
  config.gpu = std::to_string(gpu.device);
#else
  config.gpu = "off";
#endif
  StreamServer server(config.stream);  // the viewers' server: the pipeline binds no port
  config.viewers = server.unnamedStream();
  Pipeline pipeline(config);
  auto sink = std::make_shared<EveryRung>(codec);
  pipeline.addUnitSink(sink);
  pipeline.start();
  const auto deadline = std::chrono::steady_clock::now() + 20s;
  while (sink->fewest() < kUnitsPerRung && std::chrono::steady_clock::now() < deadline) std::this_thread::sleep_for(50ms);
  const PipelineStatus status = pipeline.status();
  pipeline.stop();
  ASSERT_GE(sink->fewest(), kUnitsPerRung) << "rungs 0/1/2 gave " << sink->of(0).size() << "/" << sink->of(1).size()
                                           << "/" << sink->of(2).size() << " units in 20 s";
  EXPECT_EQ(status.dataPath, kPath);
  // This codec's ladder (the VP8 one beside the H.264 one).
  const std::vector<RenditionStatus>& rungs = codec == Codec::kVP8 ? status.vp8Renditions : status.renditions;
  ASSERT_EQ(rungs.size(), kRungs);
  EXPECT_TRUE(rungs[1].running);
  EXPECT_TRUE(rungs[2].running);

  const auto top = decodeRung(sink->of(0), codec);
  ASSERT_FALSE(top.empty());
  for (std::size_t rung = 1; rung < kRungs; ++rung) {
    SCOPED_TRACE("rung " + std::to_string(rung));
    const std::vector<EncodedUnitPtr> units = sink->of(rung);
    EXPECT_TRUE(units.front()->keyframe) << "a rung's first unit is a keyframe";
    const auto pictures = decodeRung(units, codec);
    ASSERT_GE(pictures.size(), kUnitsPerRung - 2);
    std::vector<double> same, other;  // PSNR against rung 0's picture of this frame, and of the frame 10 later
    for (const auto& [sequence, picture] : pictures) {
      EXPECT_EQ(picture.width, static_cast<int>(640 >> rung));
      EXPECT_EQ(picture.height, static_cast<int>(360 >> rung));
      if (const auto it = top.find(sequence); it != top.end()) same.push_back(psnrScaled(it->second, picture));
      if (const auto it = top.find(sequence + 10); it != top.end()) other.push_back(psnrScaled(it->second, picture));
    }
    ASSERT_GE(same.size(), kUnitsPerRung / 2) << "frames both rung 0 and this rung coded";
    ASSERT_GE(other.size(), 5u);
    // Measured here: 27-38 dB for the same frame (the first pictures, at the rung's starting rate, lowest),
    // 12-18 dB against the frame 10 later (the test pattern moves).
    EXPECT_GE(median(same), 28.0) << "the rung's pictures are not rung 0's frames scaled down";
    EXPECT_GE(median(same) - median(other), 8.0) << "the rung's pictures are not of the frames they are stamped with";
  }
}

INSTANTIATE_TEST_SUITE_P(Codecs, LadderPictures, ::testing::Values(Codec::kH264, Codec::kVP8),
                         [](const ::testing::TestParamInfo<Codec>& codec) {
                           return std::string(codec.param == Codec::kVP8 ? "vp8" : "h264");
                         });

}  // namespace
}  // namespace zerohop
