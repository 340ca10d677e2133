// The restart-marker splitter (src/gpu/jpeg_strips): no device. Frames made by libjpeg-turbo with
// restart markers every MCU row (TJ_RESTART), cut into K = 2..8 strips, each strip decoded by
// libjpeg-turbo to planar Y Cb Cr and compared bit-exact with the rows of the whole frame's decode
// (4:2:0, 4:2:2, 4:4:4, grey; 1080 rows, not a multiple of 16; odd widths and heights). Then the
// refusals (no DRI, progressive, interval not on rows, too few rows) and hostile bytes (truncated,
// flipped, random, lengths past the end): the planner must refuse or give strips that stay in bounds.
#include "gpu/jpeg_strips.hpp"

#include <gtest/gtest.h>
#include <turbojpeg.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

#include "jpeg_test_support.hpp"

namespace zerohop::jpeg {
namespace {

using Bytes = std::vector<std::uint8_t>;

// A camera-like frame of any size (also odd) and subsampling: the test camera's picture sampled
// onto each plane's grid, compressed at q85 with libjpeg-turbo 2.x's environment switches
// (TJ_RESTART=<rows>, TJ_RESTART=<n>B, TJ_PROGRESSIVE=1) set for the call; nullptr = none.
Bytes encode(std::uint32_t w, std::uint32_t h, int ss, const char* env = "TJ_RESTART",
             const char* value = "1") {
  const testing::SourcePlanes src =
      testing::cameraPlanes(std::max((w + 1) & ~1u, 304u), std::max((h + 1) & ~1u, 16u), 11);  // its smallest
  const int planes = ss == TJSAMP_GRAY ? 1 : 3;
  std::vector<Bytes> data(3);
  const unsigned char* ptr[3] = {};
  int strides[3] = {};
  for (int c = 0; c < planes; ++c) {
    const int pw = tjPlaneWidth(c, int(w), ss), ph = tjPlaneHeight(c, int(h), ss);
    data[c].resize(std::size_t(pw) * ph);
    for (int y = 0; y < ph; ++y)
      for (int x = 0; x < pw; ++x) {
        const std::uint32_t sx = std::min<std::uint32_t>(std::uint32_t(x) * w / pw, src.width - 1);
        const std::uint32_t sy = std::min<std::uint32_t>(std::uint32_t(y) * h / ph, src.height - 1);
        data[c][std::size_t(y) * pw + x] =
            c == 0 ? src.y[sy * src.width + sx]
                   : (c == 1 ? src.u422 : src.v422)[sy * (src.width / 2) + sx / 2];
      }
    ptr[c] = data[c].data();
    strides[c] = pw;
  }
  if (env) setenv(env, value, 1);
  std::unique_ptr<void, int (*)(tjhandle)> tj(tjInitCompress(), tjDestroy);
  unsigned char* out = nullptr;
  unsigned long size = 0;
  const int rc = tjCompressFromYUVPlanes(tj.get(), ptr, int(w), strides, int(h), ss, &out, &size, 85, 0);
  if (env) unsetenv(env);
  if (rc != 0) throw std::runtime_error(std::string("tjCompressFromYUVPlanes: ") + tjGetErrorStr2(tj.get()));
  Bytes jpeg(out, out + size);
  tjFree(out);
  return jpeg;
}

std::vector<Bytes> writeAll(const StripPlan& plan, const Bytes& jpeg) {
  std::vector<Bytes> out;
  for (std::size_t k = 0; k < plan.strips.size(); ++k) {
    Bytes s(plan.stripBytes(k));
    EXPECT_EQ(writeStrip(plan, jpeg, k, s), s.size());
    out.push_back(std::move(s));
  }
  return out;
}

struct Case {
  const char* name;
  std::uint32_t width, height;
  int subsamp;
  std::uint32_t mcuHeight;
};
void PrintTo(const Case& c, std::ostream* os) {
  *os << c.name;
}

class StripCase : public ::testing::TestWithParam<Case> {};

TEST_P(StripCase, EachStripDecodesToTheWholeFramesRows) {
  const Case& c = GetParam();
  const Bytes jpeg = encode(c.width, c.height, c.subsamp);
  const test::TurboPlanes whole = test::turboDecode(jpeg);
  const std::uint32_t mcuRows = (c.height + c.mcuHeight - 1) / c.mcuHeight;
  for (std::uint32_t k = 2; k <= 8; ++k) {
    const StripPlan plan = planStrips(jpeg, k);
    ASSERT_TRUE(plan.splits()) << c.name << ": " << plan.refusal;
    EXPECT_EQ(plan.width, c.width);
    EXPECT_EQ(plan.height, c.height);
    EXPECT_EQ(plan.mcuHeight, c.mcuHeight);
    EXPECT_EQ(plan.rowsPerCut, 1u);
    ASSERT_EQ(plan.strips.size(), std::min(k, mcuRows));
    const std::vector<Bytes> strips = writeAll(plan, jpeg);
    EXPECT_EQ(plan.totalBytes(), [&] {
      std::size_t n = 0;
      for (const auto& s : strips) n += s.size();
      return n;
    }());
    std::uint32_t row = 0;
    for (std::size_t s = 0; s < strips.size(); ++s) {
      const Strip& st = plan.strips[s];
      EXPECT_EQ(st.firstRow, row);
      if (s + 1 < strips.size()) {
        EXPECT_EQ(st.rows % c.mcuHeight, 0u) << "strip " << s;
      }
      row += st.rows;
      const test::TurboPlanes part = test::turboDecode(strips[s]);
      ASSERT_EQ(part.width, whole.width);
      ASSERT_EQ(std::uint32_t(part.height), st.rows);
      ASSERT_EQ(part.subsamp, whole.subsamp);
      // Luma rows, then chroma rows from componentRow().
      for (std::uint32_t y = 0; y < st.rows; ++y)
        ASSERT_EQ(0, std::memcmp(&part.y[std::size_t(y) * part.width],
                                 &whole.y[std::size_t(st.firstRow + y) * whole.width], whole.width))
            << c.name << " K=" << k << " strip " << s << " luma row " << y;
      if (whole.subsamp == TJSAMP_GRAY) continue;
      const std::uint32_t c0 = plan.componentRow(1, st.firstRow);
      ASSERT_EQ(std::size_t(part.chromaHeight) * part.chromaWidth, part.u.size());
      for (int y = 0; y < part.chromaHeight; ++y) {
        const std::size_t at = std::size_t(c0 + y) * whole.chromaWidth,
                          pat = std::size_t(y) * part.chromaWidth;
        ASSERT_EQ(0, std::memcmp(&part.u[pat], &whole.u[at], whole.chromaWidth)) << "Cb row " << y;
        ASSERT_EQ(0, std::memcmp(&part.v[pat], &whole.v[at], whole.chromaWidth)) << "Cr row " << y;
      }
      EXPECT_EQ(c0 + part.chromaHeight, s + 1 < strips.size() ? plan.componentRow(1, st.firstRow + st.rows)
                                                              : std::uint32_t(whole.chromaHeight));
    }
    EXPECT_EQ(row, c.height);
  }
}

INSTANTIATE_TEST_SUITE_P(Strips, StripCase,
                         ::testing::Values(Case{"camera_1080p_420", 1920, 1080, TJSAMP_420, 16},
                                           Case{"camera_1080p_422", 1920, 1080, TJSAMP_422, 8},
                                           Case{"camera_1080p_444", 1920, 1080, TJSAMP_444, 8},
                                           Case{"camera_1080p_grey", 1920, 1080, TJSAMP_GRAY, 8},
                                           Case{"odd_1001x563_420", 1001, 563, TJSAMP_420, 16},
                                           Case{"odd_1001x563_422", 1001, 563, TJSAMP_422, 8},
                                           Case{"odd_999x77_444", 999, 77, TJSAMP_444, 8},
                                           Case{"odd_333x41_grey", 333, 41, TJSAMP_GRAY, 8},
                                           Case{"small_64x40_420", 64, 40, TJSAMP_420, 16}),
                         [](const ::testing::TestParamInfo<Case>& i) { return std::string(i.param.name); });

// Intervals of several rows: strips start only every interval; intervals of part of a row that
// divide it: strips cut every few markers, and the markers inside are renumbered from RST0.
TEST(JpegStrips, IntervalsOfSeveralRowsAndOfPartRows) {
  const Bytes twoRows = encode(640, 480, TJSAMP_420, "TJ_RESTART", "2");  // 30 MCU rows, 15 intervals
  StripPlan p = planStrips(twoRows, 4);
  ASSERT_TRUE(p.splits()) << p.refusal;
  EXPECT_EQ(p.rowsPerCut, 2u);
  ASSERT_EQ(p.strips.size(), 4u);
  for (std::size_t s = 0; s + 1 < p.strips.size(); ++s) EXPECT_EQ(p.strips[s].rows % 32, 0u);

  const Bytes quarterRow =
      encode(1280, 720, TJSAMP_422, "TJ_RESTART", "20B");  // 80 MCUs a row, 4 intervals each
  p = planStrips(quarterRow, 7);
  ASSERT_TRUE(p.splits()) << p.refusal;
  EXPECT_EQ(p.restartInterval, 20u);
  EXPECT_EQ(p.rowsPerCut, 1u);
  ASSERT_EQ(p.strips.size(), 7u);
  const test::TurboPlanes whole = test::turboDecode(quarterRow);
  const std::vector<Bytes> strips = writeAll(p, quarterRow);
  for (std::size_t s = 0; s < strips.size(); ++s) {
    const test::TurboPlanes part = test::turboDecode(strips[s]);
    EXPECT_EQ(0,
              std::memcmp(part.y.data(), &whole.y[std::size_t(p.strips[s].firstRow) * 1280], part.y.size()))
        << "strip " << s;
    EXPECT_EQ(p.strips[s].firstInterval % 4, 0u);
  }
  // 1.5 rows: aligned every 3 rows (every other interval).
  const Bytes oneAndHalf = encode(1280, 720, TJSAMP_422, "TJ_RESTART", "120B");
  p = planStrips(oneAndHalf, 8);
  ASSERT_TRUE(p.splits()) << p.refusal;
  EXPECT_EQ(p.rowsPerCut, 3u);
  const std::vector<Bytes> s2 = writeAll(p, oneAndHalf);
  const test::TurboPlanes whole2 = test::turboDecode(oneAndHalf);
  for (std::size_t s = 0; s < s2.size(); ++s) {
    const test::TurboPlanes part = test::turboDecode(s2[s]);
    EXPECT_EQ(0,
              std::memcmp(part.y.data(), &whole2.y[std::size_t(p.strips[s].firstRow) * 1280], part.y.size()));
  }
}

void expectRefused(const Bytes& jpeg, std::uint32_t k, const std::string& words) {
  const StripPlan p = planStrips(jpeg, k);
  EXPECT_FALSE(p.splits());
  EXPECT_TRUE(p.strips.empty());
  EXPECT_NE(p.refusal.find(words), std::string::npos)
      << "refusal: '" << p.refusal << "', expected '" << words << "'";
}

TEST(JpegStrips, RefusesWhatItCannotCut) {
  expectRefused(encode(640, 480, TJSAMP_420, nullptr, nullptr), 4, "no restart interval");
  expectRefused(encode(640, 480, TJSAMP_420, "TJ_PROGRESSIVE", "1"), 4, "progressive");
  // 40 MCUs a row, interval 7: aligned only every 280 MCUs = 7 rows; 480 rows = 30 MCU rows: still cuts.
  EXPECT_TRUE(planStrips(encode(640, 480, TJSAMP_420, "TJ_RESTART", "7B"), 4).splits());
  // 40 MCUs a row, 30 rows, interval 1201: one interval, nothing lines up.
  expectRefused(encode(640, 480, TJSAMP_420, "TJ_RESTART", "1201B"), 4, "not aligned");
  expectRefused(encode(64, 16, TJSAMP_420), 4, "too few MCU rows");
  expectRefused(encode(640, 480, TJSAMP_420), 1, "fewer than 2");
  expectRefused(Bytes{}, 4, "not a JPEG");
  expectRefused(Bytes(100, 0x42), 4, "not a JPEG");
  // A restart marker knocked out of the scan: the count no longer matches the header.
  Bytes missing = encode(640, 480, TJSAMP_420);
  const StripPlan ok = planStrips(missing, 4);
  ASSERT_TRUE(ok.splits());
  missing[ok.restarts[5] + 1] = 0x00;
  expectRefused(missing, 4, "restart marker");
}

// Hostile bytes: truncations, flipped bytes, random data and runaway lengths. Whatever comes back
// either is a refusal or gives strips that lie inside the input and write without overrun.
TEST(JpegStrips, HostileInputNeverReadsOrWritesOutOfBounds) {
  const Bytes good = encode(320, 240, TJSAMP_422);
  std::mt19937 rng(99);
  auto check = [&](const Bytes& in) {
    const StripPlan p = planStrips(in, 1 + rng() % 8);
    if (!p.splits()) {
      EXPECT_FALSE(p.refusal.empty());
      return;
    }
    EXPECT_LE(p.scanEnd + 2, in.size());
    for (std::size_t k = 0; k < p.strips.size(); ++k) {
      Bytes out(p.stripBytes(k) + 16, 0xEE);
      EXPECT_EQ(writeStrip(p, in, k, std::span<std::uint8_t>(out.data(), out.size() - 16)), p.stripBytes(k));
      for (std::size_t i = out.size() - 16; i < out.size(); ++i)
        ASSERT_EQ(out[i], 0xEE) << "wrote past the end";
      Bytes small(p.stripBytes(k) - 1);
      EXPECT_EQ(writeStrip(p, in, k, small), 0u);
    }
    Bytes all(p.totalBytes());
    EXPECT_EQ(writeStrip(p, in, p.strips.size(), all), 0u) << "strip index past the end";
  };
  for (std::size_t cut = 0; cut < good.size(); cut += 37) check(Bytes(good.begin(), good.begin() + cut));
  for (int i = 0; i < 3000; ++i) {
    Bytes b = good;
    const int flips = 1 + rng() % 4;
    for (int f = 0; f < flips; ++f) {
      // Mostly the headers (where lengths and counts live), sometimes the scan.
      const std::size_t at = rng() % 4 ? rng() % std::min<std::size_t>(b.size(), 700) : rng() % b.size();
      b[at] = rng() % 3 ? static_cast<std::uint8_t>(rng()) : 0xFF;
    }
    check(b);
  }
  for (int i = 0; i < 200; ++i) {
    Bytes b(rng() % 2000);
    for (auto& x : b) x = static_cast<std::uint8_t>(rng() % 5 ? rng() : 0xFF);
    if (b.size() > 2) b[0] = 0xFF, b[1] = 0xD8;
    check(b);
  }
  // A segment length that runs far past the end.
  Bytes runaway = {0xFF, 0xD8, 0xFF, 0xDB, 0xFF, 0xFF, 0x00};
  check(runaway);
}

}  // namespace
}  // namespace zerohop::jpeg
