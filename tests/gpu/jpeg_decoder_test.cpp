// GpuJpegDecoder against libjpeg-turbo: every backend the GPU has, camera-like and random content,
// 4:2:2 / 4:2:0 / 4:4:4 / 4:4:0 / greyscale at q85, restart intervals, sizes that are not whole MCUs,
// NV12 and I420 with padded pitches, outputs poisoned before each decode. Then the failure cases:
// empty, truncated, corrupt, huge declared size: each throws a clear Error and the next frame decodes.
// Restart strips (hardware backend): the strip decode equals the whole-frame decode byte for byte, and a
// damaged frame decoded as strips fails alone.
//
// Tolerance (nvJPEG's IDCT vs libjpeg-turbo's islow IDCT; the 4:2:0 reduction is exact on both
// sides): every byte within kMaxDiff = 1, mean difference <= kMaxMean = 0.05. Measured on the H200
// (nvJPEG 13.0.1, 120 comparisons): hardware backend bit-exact (max 0, mean 0) in every case;
// gpu-hybrid, hybrid and default max 1, mean <= 0.025. The values are printed ("[jpeg-diff] ...")
// and recorded as test properties.
#include <gtest/gtest.h>
#include <turbojpeg.h>

#include <algorithm>
#include <cstring>
#include <iostream>
#include <map>
#include <memory>
#include <random>
#include <set>
#include <vector>

#include "gpu/ready_events.hpp"
#include "gpu_test_support.hpp"
#include "jpeg_test_support.hpp"
#include "zerohop/error.hpp"
#include "zerohop/gpu_jpeg.hpp"

namespace zerohop::test {
namespace {

constexpr int kMaxDiff = 1;
constexpr double kMaxMean = 0.05;
constexpr std::uint8_t kPoison = 0xA5;

std::vector<JpegBackend> availableBackends() {
  std::vector<JpegBackend> b = {JpegBackend::kGpuHybrid, JpegBackend::kHybrid, JpegBackend::kDefault};
  const JpegSupport s = probeJpeg(-1);
  if (s.available && s.hardware) b.insert(b.begin(), JpegBackend::kHardware);
  return b;
}

class GpuJpegTest : public GpuTest {
 protected:
  void SetUp() override {
    GpuTest::SetUp();
    if (IsSkipped()) return;
    support_ = probeJpeg(device_);
    if (!support_.available) GTEST_SKIP() << "nvJPEG not usable: " << support_.reason;
  }

  // Decodes `jpeg` with `decoder` into a poisoned, padded `format` target and compares it with
  // libjpeg-turbo's decode of the same bytes.
  void expectMatches(GpuJpegDecoder& decoder, const std::vector<std::uint8_t>& jpeg, PixelFormat format,
                     const std::string& label) {
    const TurboPlanes ref = turboDecode(jpeg);
    DeviceTarget dst(format, ref.width, ref.height, /*extraPitch=*/64, device_);
    dst.poison(kPoison);
    PinnedJpeg in(jpeg, device_);
    decoder.decode(in.frame, dst.frame, Completion::kWait);
    EXPECT_NE(dst.frame.gpu.readyEvent, nullptr);
    const DiffStats d = compare420(dst.download(), expected420(ref, format), kPoison);
    std::cout << "[jpeg-diff] " << decoder.backendName() << " " << label << " " << formatName(format)
              << ": max " << d.max << " mean " << d.mean << "\n";
    RecordProperty(std::string(decoder.backendName()) + "_" + std::string(formatName(format)) + "_max", d.max);
    EXPECT_LE(d.max, kMaxDiff) << decoder.backendName() << " " << label;
    EXPECT_LE(d.mean, kMaxMean) << decoder.backendName() << " " << label;
    EXPECT_EQ(d.paddingWritten, 0) << "padding bytes overwritten";
  }

  JpegSupport support_;
};

struct Case {
  const char* name;
  std::uint32_t width, height;
  int subsamp;
  bool random;
  const char* tjEnv;  ///< libjpeg-turbo switch for the encode: TJ_RESTART, TJ_PROGRESSIVE, or null
  const char* tjValue;
};

void PrintTo(const Case& c, std::ostream* os) { *os << c.name; }

// One decoder per backend for the whole suite: creating the handles costs about a second each.
class GpuJpegCase : public GpuJpegTest, public ::testing::WithParamInterface<Case> {
 protected:
  static void TearDownTestSuite() { decoders().clear(); }
  GpuJpegDecoder& decoderFor(JpegBackend b) {
    auto& d = decoders()[b];
    if (!d) d = std::make_unique<GpuJpegDecoder>(device_, b);
    return *d;
  }
  static std::map<JpegBackend, std::unique_ptr<GpuJpegDecoder>>& decoders() {
    static std::map<JpegBackend, std::unique_ptr<GpuJpegDecoder>> map;
    return map;
  }
};

TEST_P(GpuJpegCase, MatchesLibjpegTurboOnEveryBackend) {
  const Case& c = GetParam();
  std::mt19937 rng(1234 + c.width * 7 + c.subsamp);
  const testing::SourcePlanes planes =
      c.random ? randomPlanes(c.width, c.height, rng) : testing::cameraPlanes(c.width, c.height, 7);
  const std::vector<std::uint8_t> jpeg =
      c.tjEnv ? compressWithTjEnv(planes, c.subsamp, c.tjEnv, c.tjValue) : testing::compressJpeg(planes, c.subsamp);
  const std::string env = c.tjEnv ? c.tjEnv : "";
  ASSERT_EQ(hasRestartInterval(jpeg), env == "TJ_RESTART") << "the test JPEG's restart interval is not what was asked";
  ASSERT_EQ(isProgressive(jpeg), env == "TJ_PROGRESSIVE") << "the test JPEG is not what was asked";
  for (JpegBackend b : availableBackends()) {
    GpuJpegDecoder& decoder = decoderFor(b);
    ASSERT_EQ(decoder.backend(), b);
    for (PixelFormat f : {PixelFormat::kNV12, PixelFormat::kI420}) expectMatches(decoder, jpeg, f, c.name);
  }
}

INSTANTIATE_TEST_SUITE_P(
    Jpeg, GpuJpegCase,
    ::testing::Values(Case{"camera_720p_422", 1280, 720, TJSAMP_422, false, nullptr, nullptr},
                      Case{"camera_720p_420", 1280, 720, TJSAMP_420, false, nullptr, nullptr},
                      Case{"camera_720p_444", 1280, 720, TJSAMP_444, false, nullptr, nullptr},
                      Case{"camera_720p_grey", 1280, 720, TJSAMP_GRAY, false, nullptr, nullptr},
                      Case{"camera_720p_440", 1280, 720, TJSAMP_440, false, nullptr, nullptr},
                      Case{"random_640x480_422", 640, 480, TJSAMP_422, true, nullptr, nullptr},
                      Case{"random_640x480_420", 640, 480, TJSAMP_420, true, nullptr, nullptr},
                      Case{"random_640x480_444", 640, 480, TJSAMP_444, true, nullptr, nullptr},
                      Case{"random_640x480_grey", 640, 480, TJSAMP_GRAY, true, nullptr, nullptr},
                      Case{"camera_1000x562_422", 1000, 562, TJSAMP_422, false, nullptr, nullptr},  // not whole MCUs
                      Case{"camera_1000x562_420", 1000, 562, TJSAMP_420, false, nullptr, nullptr},
                      Case{"random_36x18_444", 36, 18, TJSAMP_444, true, nullptr, nullptr},
                      Case{"camera_1080p_422_restart1", 1920, 1080, TJSAMP_422, false, "TJ_RESTART", "1"},
                      Case{"camera_1080p_420_restart2", 1920, 1080, TJSAMP_420, false, "TJ_RESTART", "2"},
                      Case{"random_1000x562_444_restart1", 1000, 562, TJSAMP_444, true, "TJ_RESTART", "1"},
                      // the hardware engines refuse progressive: the GPU-hybrid fallback decodes it
                      Case{"camera_720p_420_progressive", 1280, 720, TJSAMP_420, false, "TJ_PROGRESSIVE", "1"}),
    [](const ::testing::TestParamInfo<Case>& i) { return std::string(i.param.name); });

TEST_F(GpuJpegTest, AutoPicksHardwareWhenTheGpuHasIt) {
  GpuJpegDecoder decoder(device_);
  EXPECT_EQ(decoder.backend(), support_.hardware ? JpegBackend::kHardware : JpegBackend::kGpuHybrid);
  std::cout << "[jpeg] " << decoder.describe() << "\n";
  EXPECT_NE(decoder.describe().find(support_.hardware ? "engines" : "no hardware"), std::string::npos)
      << decoder.describe();
  if (!support_.hardware) {
    EXPECT_THROW(GpuJpegDecoder(device_, JpegBackend::kHardware), Error);
  }
}

// Frames enqueued back to back without waiting (host phase of frame N+1 while the GPU works on N):
// each destination must hold its own frame.
TEST_F(GpuJpegTest, ConsecutiveAsyncFramesEachLandInTheirOwnDestination) {
  for (JpegBackend b : availableBackends()) {
    GpuJpegDecoder decoder(device_, b);
    std::vector<std::vector<std::uint8_t>> jpegs;
    std::vector<std::unique_ptr<PinnedJpeg>> inputs;
    std::vector<std::unique_ptr<DeviceTarget>> dsts;
    for (int k = 0; k < 6; ++k) {
      jpegs.push_back(testing::compressJpeg(testing::cameraPlanes(640, 360, 10 + k), k % 2 ? TJSAMP_420 : TJSAMP_422));
      inputs.push_back(std::make_unique<PinnedJpeg>(jpegs.back(), device_, k));
      dsts.push_back(std::make_unique<DeviceTarget>(PixelFormat::kNV12, 640, 360, 0, device_));
      dsts.back()->poison(kPoison);
    }
    for (int k = 0; k < 6; ++k) decoder.decode(inputs[k]->frame, dsts[k]->frame);
    for (int k = 0; k < 6; ++k) {
      EXPECT_EQ(dsts[k]->frame.sequence, static_cast<std::uint64_t>(k));
      const DiffStats d = compare420(dsts[k]->download(), expected420(turboDecode(jpegs[k]), PixelFormat::kNV12), kPoison);
      EXPECT_LE(d.max, kMaxDiff) << jpegBackendName(b) << " frame " << k;
    }
  }
}

// A caller decoding into ever new destination buffers must not grow the decoder's ready events
// without bound: at most ReadyEvents::kCapacity distinct events come back, and the frames still match.
TEST_F(GpuJpegTest, ManyDestinationBuffersShareABoundedSetOfReadyEvents) {
  GpuJpegDecoder decoder(device_);
  // The smallest picture the test pattern draws (its timecode strip needs 304 pixels).
  constexpr std::uint32_t kW = 320, kH = 32;
  const std::vector<std::uint8_t> jpeg = testing::compressJpeg(testing::cameraPlanes(kW, kH, 3), TJSAMP_422);
  const auto expected = expected420(turboDecode(jpeg), PixelFormat::kNV12);
  PinnedJpeg in(jpeg, device_);
  constexpr std::size_t kBuffers = 4 * gpu_detail::ReadyEvents::kCapacity;
  std::vector<std::unique_ptr<DeviceTarget>> dsts;
  std::set<void*> events;
  for (std::size_t i = 0; i < kBuffers; ++i) {
    dsts.push_back(std::make_unique<DeviceTarget>(PixelFormat::kNV12, kW, kH, 0, device_));
    dsts.back()->poison(kPoison);
    decoder.decode(in.frame, dsts.back()->frame);
    ASSERT_NE(dsts.back()->frame.gpu.readyEvent, nullptr);
    events.insert(dsts.back()->frame.gpu.readyEvent);
  }
  EXPECT_LE(events.size(), gpu_detail::ReadyEvents::kCapacity)
      << kBuffers << " destination buffers: one event each would grow without bound";
  for (std::size_t i = 0; i < kBuffers; i += 7) {
    const DiffStats d = compare420(dsts[i]->download(), expected, kPoison);
    EXPECT_LE(d.max, kMaxDiff) << decoder.backendName() << " buffer " << i;
  }
}

TEST_F(GpuJpegTest, BatchMatchesLibjpegTurbo) {
  for (JpegBackend b : availableBackends()) {
    GpuJpegDecoder decoder(device_, b);
    std::vector<std::vector<std::uint8_t>> jpegs;
    std::vector<std::unique_ptr<PinnedJpeg>> inputs;
    std::vector<std::unique_ptr<DeviceTarget>> dsts;
    std::vector<const Frame*> in;
    std::vector<Frame*> out;
    for (int k = 0; k < 8; ++k) {
      const int ss = k % 3 == 0 ? TJSAMP_422 : k % 3 == 1 ? TJSAMP_420 : TJSAMP_444;
      jpegs.push_back(testing::compressJpeg(testing::cameraPlanes(1280, 720, 20 + k), ss));
      inputs.push_back(std::make_unique<PinnedJpeg>(jpegs.back(), device_, k));
      dsts.push_back(std::make_unique<DeviceTarget>(k % 2 ? PixelFormat::kI420 : PixelFormat::kNV12, 1280, 720, 32, device_));
      dsts.back()->poison(kPoison);
      in.push_back(&inputs.back()->frame);
      out.push_back(&dsts.back()->frame);
    }
    decoder.decodeBatch(in, out, Completion::kWait);
    for (int k = 0; k < 8; ++k) {
      const DiffStats d = compare420(dsts[k]->download(), expected420(turboDecode(jpegs[k]), dsts[k]->frame.format), kPoison);
      EXPECT_LE(d.max, kMaxDiff) << jpegBackendName(b) << " batch frame " << k;
      EXPECT_EQ(d.paddingWritten, 0);
    }
  }
}

// The bad frames a camera or a USB link produce. Each must throw zerohop::Error (naming the check or
// the nvJPEG call and status) or, for damage inside the entropy-coded data that no decoder can see,
// at least not break anything; the good frame after each must decode exactly as before.
TEST_F(GpuJpegTest, BadFramesFailAloneAndTheNextFrameDecodes) {
  const auto good = testing::compressJpeg(testing::cameraPlanes(640, 480, 3), TJSAMP_422);
  const auto ref = expected420(turboDecode(good), PixelFormat::kNV12);

  struct Bad {
    const char* name;
    std::vector<std::uint8_t> bytes;
    bool mustThrow;
  };
  std::vector<Bad> bad;
  bad.push_back({"empty", {}, true});
  bad.push_back({"truncated_half", std::vector<std::uint8_t>(good.begin(), good.begin() + good.size() / 2), true});
  {
    auto t = std::vector<std::uint8_t>(good.begin(), good.begin() + good.size() / 2);
    t.push_back(0xFF);
    t.push_back(0xD9);  // framing looks whole, the scan is cut
    bad.push_back({"truncated_scan_with_eoi", t, false});
  }
  {
    auto t = good;  // SOF0 height and width set to 65500 x 65500
    for (std::size_t i = 2; i + 8 < t.size(); ++i)
      if (t[i] == 0xFF && t[i + 1] == 0xC0) {
        t[i + 5] = 0xFF; t[i + 6] = 0xDC; t[i + 7] = 0xFF; t[i + 8] = 0xDC;
        break;
      }
    bad.push_back({"huge_declared_size", t, true});
  }
  {
    auto t = good;  // no SOF at all: the frame header marker is destroyed
    for (std::size_t i = 2; i + 1 < t.size(); ++i)
      if (t[i] == 0xFF && t[i + 1] == 0xC0) {
        t[i + 1] = 0x01;
        break;
      }
    bad.push_back({"no_frame_header", t, true});
  }
  {
    auto t = good;  // garbage in the middle of the entropy-coded data
    std::mt19937 rng(5);
    for (std::size_t i = t.size() / 2; i < t.size() / 2 + 200; ++i) t[i] = static_cast<std::uint8_t>(rng());
    bad.push_back({"garbled_scan", t, false});
  }
  bad.push_back({"not_a_jpeg", std::vector<std::uint8_t>(1000, 0x42), true});

  for (JpegBackend b : availableBackends()) {
    GpuJpegDecoder decoder(device_, b);
    for (const Bad& f : bad) {
      DeviceTarget dst(PixelFormat::kNV12, 640, 480, 0, device_);
      PinnedJpeg in(f.bytes, device_);
      bool threw = false;
      try {
        decoder.decode(in.frame, dst.frame, Completion::kWait);
      } catch (const Error& e) {
        threw = true;
        const std::string what = e.what();
        std::cout << "[jpeg-bad] " << jpegBackendName(b) << " " << f.name << ": " << what << "\n";
        EXPECT_TRUE(what.find("nvjpeg") != std::string::npos || what.find("GpuJpegDecoder") != std::string::npos)
            << what;
        if (what.find("nvjpeg") != std::string::npos) {
          EXPECT_NE(what.find("NVJPEG_STATUS_"), std::string::npos) << what;
        }
      }
      if (f.mustThrow) {
        EXPECT_TRUE(threw) << jpegBackendName(b) << ": " << f.name << " did not throw";
      }
      if (!threw) std::cout << "[jpeg-bad] " << jpegBackendName(b) << " " << f.name << ": decoded without error\n";

      DeviceTarget next(PixelFormat::kNV12, 640, 480, 0, device_);
      next.poison(kPoison);
      PinnedJpeg goodIn(good, device_, 2);
      ASSERT_NO_THROW(decoder.decode(goodIn.frame, next.frame, Completion::kWait)) << "after " << f.name;
      const DiffStats d = compare420(next.download(), ref, kPoison);
      EXPECT_LE(d.max, kMaxDiff) << jpegBackendName(b) << ": the frame after " << f.name;
    }
  }
}

// Restart strips (hardware backend): a frame with restart markers every MCU row (or every 2 rows),
// cut into K strips decoded by several engines, must equal the whole-frame decode byte for byte,
// padding included, and libjpeg-turbo within the usual tolerance.
TEST_F(GpuJpegTest, RestartStripsEqualTheWholeFrameDecode) {
  if (!support_.hardware)
    GTEST_SKIP() << "restart strips are a hardware-backend path: " << support_.hardwareReason;
  struct StripCase {
    const char* name;
    std::uint32_t width, height;
    int subsamp;
    const char* rows;  // TJ_RESTART
    int mcuRows;
  };
  const StripCase cases[] = {{"1080p_420", 1920, 1080, TJSAMP_420, "1", 68},
                             {"1080p_422", 1920, 1080, TJSAMP_422, "1", 135},
                             {"1080p_444", 1920, 1080, TJSAMP_444, "1", 135},
                             {"1080p_grey", 1920, 1080, TJSAMP_GRAY, "1", 135},
                             {"720p_420_restart2", 1280, 720, TJSAMP_420, "2", 23},
                             {"1000x562_422", 1000, 562, TJSAMP_422, "1", 71}};
  GpuJpegDecoder whole(device_, JpegBackend::kHardware);
  whole.setRestartStrips(1);
  GpuJpegDecoder strips(device_, JpegBackend::kHardware);
  EXPECT_EQ(strips.restartStrips(), GpuJpegDecoder::kDefaultRestartStrips);
  for (const StripCase& c : cases) {
    const auto jpeg =
        compressWithTjEnv(testing::cameraPlanes(c.width, c.height, 31), c.subsamp, "TJ_RESTART", c.rows);
    ASSERT_TRUE(hasRestartInterval(jpeg));
    const TurboPlanes ref = turboDecode(jpeg);
    PinnedJpeg in(jpeg, device_);
    for (PixelFormat f : {PixelFormat::kNV12, PixelFormat::kI420}) {
      DeviceTarget want(f, c.width, c.height, 64, device_);
      want.poison(kPoison);
      whole.decode(in.frame, want.frame, Completion::kWait);
      EXPECT_EQ(whole.lastStripCount(), 1);
      const HostImage wantImage = want.download();
      for (int k : {2, 4, 7, 8}) {
        strips.setRestartStrips(k, /*minStripRows=*/1);  // exactly k (the default keeps strips >= 150 rows)
        DeviceTarget got(f, c.width, c.height, 64, device_);
        got.poison(kPoison);
        strips.decode(in.frame, got.frame, Completion::kWait);
        EXPECT_EQ(strips.lastStripCount(), std::min(k, c.mcuRows)) << c.name << " K=" << k;
        const HostImage gotImage = got.download();
        for (std::uint32_t p = 0; p < gotImage.planeCount; ++p) {
          EXPECT_TRUE(gotImage.plane[p] == wantImage.plane[p])
              << c.name << " " << formatName(f) << " K=" << k << ": plane " << p
              << " differs from the whole-frame decode";
        }
        const DiffStats d = compare420(gotImage, expected420(ref, f), kPoison);
        std::cout << "[jpeg-strips] " << c.name << " " << formatName(f) << " K=" << k << " ("
                  << strips.lastStripCount() << " strips): max " << d.max << " mean " << d.mean
                  << " vs libjpeg-turbo\n";
        EXPECT_LE(d.max, kMaxDiff);
        EXPECT_EQ(d.paddingWritten, 0);
      }
    }
  }
}

// With strips on, a damaged frame fails (or decodes to garbage) alone: the frames after it decode
// through the strip path exactly like before. Frames that cannot be cut (no restart markers,
// progressive) take the whole-frame paths.
TEST_F(GpuJpegTest, RestartStripsBadFrameFailsAlone) {
  if (!support_.hardware)
    GTEST_SKIP() << "restart strips are a hardware-backend path: " << support_.hardwareReason;
  GpuJpegDecoder decoder(device_, JpegBackend::kHardware);  // default strips: 7, >= 150 rows
  const auto planes = testing::cameraPlanes(1280, 720, 4);
  const auto good = compressWithTjEnv(planes, TJSAMP_422, "TJ_RESTART", "1");
  const HostImage ref = expected420(turboDecode(good), PixelFormat::kNV12);
  std::vector<std::pair<const char*, std::vector<std::uint8_t>>> bad;
  {
    auto t = good;  // noise inside the third strip's entropy-coded data
    std::mt19937 rng(8);
    for (std::size_t i = t.size() * 3 / 7; i < t.size() * 3 / 7 + 300; ++i)
      t[i] = static_cast<std::uint8_t>(rng());
    bad.emplace_back("garbled_scan", t);  // noise forms markers: refused by the splitter, decoded whole
  }
  {
    // Damage that keeps every marker: no 0xFF written or overwritten, so the frame still splits and
    // the engines decode the damaged strip (to garbage, or they report it).
    auto t = good;
    std::mt19937 rng(9);
    for (std::size_t i = t.size() * 3 / 7; i < t.size() * 3 / 7 + 300; ++i) {
      if (t[i] == 0xFF || t[i - 1] == 0xFF) continue;
      t[i] = static_cast<std::uint8_t>(rng() % 0xFF);
    }
    bad.emplace_back("garbled_strip_markers_intact", t);
  }
  {
    auto t = std::vector<std::uint8_t>(good.begin(), good.begin() + good.size() * 2 / 3);
    t.push_back(0xFF);
    t.push_back(0xD9);  // framing whole, restart markers missing: refused by the splitter
    bad.emplace_back("cut_with_eoi", t);
  }
  bad.emplace_back("truncated", std::vector<std::uint8_t>(good.begin(), good.begin() + good.size() / 2));
  for (const auto& [name, bytes] : bad) {
    DeviceTarget dst(PixelFormat::kNV12, 1280, 720, 0, device_);
    PinnedJpeg in(bytes, device_);
    try {
      decoder.decode(in.frame, dst.frame, Completion::kWait);
      std::cout << "[jpeg-strips-bad] " << name << ": decoded without error, " << decoder.lastStripCount()
                << " strips\n";
      if (std::string(name) == "garbled_strip_markers_intact") {
        EXPECT_EQ(decoder.lastStripCount(), 4) << "the damaged frame did not take the strip path";
      }
    } catch (const Error& e) {
      std::cout << "[jpeg-strips-bad] " << name << ": " << e.what() << "\n";
    }
    DeviceTarget next(PixelFormat::kNV12, 1280, 720, 0, device_);
    next.poison(kPoison);
    PinnedJpeg goodIn(good, device_, 2);
    ASSERT_NO_THROW(decoder.decode(goodIn.frame, next.frame, Completion::kWait)) << "after " << name;
    EXPECT_EQ(decoder.lastStripCount(), 4) << "after " << name;  // 720 rows / 150
    const DiffStats d = compare420(next.download(), ref, kPoison);
    EXPECT_LE(d.max, kMaxDiff) << "the frame after " << name;
  }
  // Not cuttable: whole frame.
  for (const char* env : {"TJ_PROGRESSIVE", "TJ_NONE"}) {
    const auto jpeg = compressWithTjEnv(planes, TJSAMP_420, env, "1");
    DeviceTarget dst(PixelFormat::kNV12, 1280, 720, 0, device_);
    dst.poison(kPoison);
    PinnedJpeg in(jpeg, device_);
    decoder.decode(in.frame, dst.frame, Completion::kWait);
    EXPECT_EQ(decoder.lastStripCount(), 1) << env;
    EXPECT_LE(compare420(dst.download(), expected420(turboDecode(jpeg), PixelFormat::kNV12), kPoison).max,
              kMaxDiff);
  }
  EXPECT_THROW(decoder.setRestartStrips(0), Error);
  EXPECT_THROW(decoder.setRestartStrips(4, 0), Error);
}

TEST_F(GpuJpegTest, RefusesWrongDestinations) {
  GpuJpegDecoder decoder(device_);
  const auto jpeg = testing::compressJpeg(testing::cameraPlanes(640, 480, 3), TJSAMP_422);
  PinnedJpeg in(jpeg, device_);
  DeviceTarget smaller(PixelFormat::kNV12, 320, 240, 0, device_);
  try {
    decoder.decode(in.frame, smaller.frame);
    ADD_FAILURE() << "size mismatch accepted";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), Errc::kInvalidArgument);
    EXPECT_NE(std::string(e.what()).find("640x480"), std::string::npos) << e.what();
  }
  DeviceTarget yuyv(PixelFormat::kYUYV, 640, 480, 0, device_);
  EXPECT_THROW(decoder.decode(in.frame, yuyv.frame), Error);
  const auto j411 = testing::compressJpeg(testing::cameraPlanes(640, 480, 3), TJSAMP_411);
  PinnedJpeg in411(j411, device_);
  DeviceTarget dst(PixelFormat::kNV12, 640, 480, 0, device_);
  try {
    decoder.decode(in411.frame, dst.frame);
    ADD_FAILURE() << "4:1:1 accepted";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), Errc::kUnsupported) << e.what();
  }
}

}  // namespace
}  // namespace zerohop::test
