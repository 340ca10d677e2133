#include "pattern_frames.hpp"

#include <algorithm>
#include <cmath>

#if defined(__SSE2__)
#include <emmintrin.h>
#elif defined(__ARM_NEON)
#include <arm_neon.h>
#endif

#include "zerohop/error.hpp"

namespace zerohop {
namespace {

std::uint8_t clamp8(int v) { return static_cast<std::uint8_t>(std::clamp(v, 0, 255)); }

// dst = src + up - down per byte, saturating (one of up, down is 0 at each byte): 16 bytes a step.
void copyWithNoise(std::uint8_t* dst, const std::uint8_t* src, const std::uint8_t* up, const std::uint8_t* down,
                   std::size_t n) {
  std::size_t i = 0;
#if defined(__SSE2__)
  for (; i + 16 <= n; i += 16) {
    __m128i v = _mm_loadu_si128(reinterpret_cast<const __m128i*>(src + i));
    v = _mm_adds_epu8(v, _mm_loadu_si128(reinterpret_cast<const __m128i*>(up + i)));
    v = _mm_subs_epu8(v, _mm_loadu_si128(reinterpret_cast<const __m128i*>(down + i)));
    _mm_storeu_si128(reinterpret_cast<__m128i*>(dst + i), v);
  }
#elif defined(__ARM_NEON)
  for (; i + 16 <= n; i += 16) vst1q_u8(dst + i, vqsubq_u8(vqaddq_u8(vld1q_u8(src + i), vld1q_u8(up + i)), vld1q_u8(down + i)));
#endif
  for (; i < n; ++i) dst[i] = clamp8(src[i] + up[i] - down[i]);
}

// Smooth value noise from a coarse random lattice, bilinearly interpolated.
class ValueNoise {
 public:
  ValueNoise(std::uint32_t cells, std::uint32_t seed) : cells_(cells), lattice_(cells * cells) {
    std::mt19937 rng(seed);
    for (auto& v : lattice_) v = static_cast<float>(rng() % 256);
  }
  float at(float x, float y) const {  // x, y in lattice units, wrapping
    const auto xi = static_cast<std::uint32_t>(x), yi = static_cast<std::uint32_t>(y);
    const float fx = x - static_cast<float>(xi), fy = y - static_cast<float>(yi);
    auto l = [&](std::uint32_t a, std::uint32_t b) { return lattice_[(b % cells_) * cells_ + (a % cells_)]; };
    const float top = l(xi, yi) * (1 - fx) + l(xi + 1, yi) * fx;
    const float bot = l(xi, yi + 1) * (1 - fx) + l(xi + 1, yi + 1) * fx;
    return top * (1 - fy) + bot * fy;
  }

 private:
  std::uint32_t cells_;
  std::vector<float> lattice_;
};

}  // namespace

PatternFrames::PatternFrames(PixelFormat format, std::uint32_t width, std::uint32_t height)
    : format_(format), width_(width), height_(height) {
  if (format != PixelFormat::kYUYV && format != PixelFormat::kUYVY) {
    throw Error(Errc::kUnsupported, std::string("the test pattern renders yuyv or uyvy, not ") +
                                        std::string(formatName(format)));
  }
  if (width % 2 || width < kTimecodeMinWidth || height < 16) {
    throw Error(Errc::kInvalidArgument, "test pattern size " + std::to_string(width) + "x" + std::to_string(height) +
                                            " must have an even width >= " + std::to_string(kTimecodeMinWidth) +
                                            " and a height >= 16");
  }
  // The texture is twice the frame in each direction so the visible window can scroll over it.
  texWidth_ = width * 2;
  texHeight_ = height * 2;
  texture_.resize(std::size_t{texWidth_} * 2 * texHeight_);
  ValueNoise coarse(16, 1), fine(64, 2), hue(8, 3);
  const bool yuyv = format == PixelFormat::kYUYV;
  for (std::uint32_t y = 0; y < texHeight_; ++y) {
    std::uint8_t* row = texture_.data() + std::size_t{y} * texWidth_ * 2;
    for (std::uint32_t x = 0; x < texWidth_; x += 2) {
      const float u = static_cast<float>(x) / static_cast<float>(texWidth_);
      const float v = static_cast<float>(y) / static_cast<float>(texHeight_);
      auto luma = [&](std::uint32_t px) {
        const float pu = static_cast<float>(px) / static_cast<float>(texWidth_);
        float l = 0.55f * coarse.at(pu * 16, v * 16) + 0.30f * fine.at(pu * 64, v * 64);
        // Fine stripes and a checker give edges at many orientations and frequencies.
        l += 30.0f * std::sin(pu * 400.0f + v * 90.0f);
        if (((px / 48) + (y / 48)) % 2 == 0) l += 25.0f;
        return clamp8(static_cast<int>(16 + l * 0.8f));
      };
      const std::uint8_t y0 = luma(x), y1 = luma(x + 1);
      const std::uint8_t cb = clamp8(static_cast<int>(128 + (hue.at(u * 8, v * 8) - 128) * 0.6f));
      const std::uint8_t cr = clamp8(static_cast<int>(128 + (hue.at(v * 8 + 3, u * 8 + 5) - 128) * 0.6f));
      std::uint8_t* px = row + std::size_t{x} * 2;
      if (yuyv) {
        px[0] = y0, px[1] = cb, px[2] = y1, px[3] = cr;
      } else {
        px[0] = cb, px[1] = y0, px[2] = cr, px[3] = y1;
      }
    }
  }
  // Luma bytes only: even offsets for YUYV, odd for UYVY; render() starts each row at an even offset.
  noiseUp_.assign(std::size_t{1} << 20, 0);
  noiseDown_.assign(noiseUp_.size(), 0);
  std::normal_distribution<float> gauss(0.0f, 3.0f);
  std::mt19937 rng(99);
  for (std::size_t i = yuyv ? 0 : 1; i < noiseUp_.size(); i += 2) {
    const long n = std::clamp(std::lround(gauss(rng)), -12L, 12L);
    (n >= 0 ? noiseUp_[i] : noiseDown_[i]) = static_cast<std::uint8_t>(n >= 0 ? n : -n);
  }
}

void PatternFrames::render(Frame& frame, std::uint64_t index, const Timecode& tc) {
  const bool yuyv = format_ == PixelFormat::kYUYV;
  const std::uint32_t lumaOffset = yuyv ? 0 : 1;  // of the ball below
  // Slow diagonal pan, like a handheld camera, in even pixel steps (4:2:2 macropixels).
  const double t = static_cast<double>(index);
  const auto dx = static_cast<std::uint32_t>((width_ / 2.0) * (1 + std::sin(t * 0.013))) & ~1u;
  const auto dy = static_cast<std::uint32_t>((height_ / 2.0) * (1 + std::sin(t * 0.017 + 1)));
  const std::size_t rowBytes = std::size_t{width_} * 2;
  for (std::uint32_t y = 0; y < height_; ++y) {
    std::uint8_t* dst = frame.data[0] + std::size_t{y} * frame.pitch[0];
    const std::uint8_t* src = texture_.data() + (std::size_t{y + dy} * texWidth_ + dx) * 2;
    // Sensor noise on luma: a fresh window of the noise table each frame and row (an even start, so
    // the table's luma bytes meet the row's).
    const std::size_t n = (rng_() % (noiseUp_.size() - rowBytes)) & ~std::size_t{1};
    copyWithNoise(dst, src, noiseUp_.data() + n, noiseDown_.data() + n, rowBytes);
  }
  // A bright object bouncing across the picture (fast motion) with a dark ring.
  const std::uint32_t r = std::max<std::uint32_t>(8, height_ / 10);
  const double phase = t * 0.05;
  const auto cx = static_cast<int>((width_ - 2 * r) * (0.5 + 0.5 * std::sin(phase * 1.3)) + r);
  const auto cy = static_cast<int>((height_ - 2 * r) * (0.5 + 0.5 * std::cos(phase)) + r);
  const int ri = static_cast<int>(r);
  for (int y = std::max(0, cy - ri); y < std::min<int>(static_cast<int>(height_), cy + ri); ++y) {
    std::uint8_t* row = frame.data[0] + std::size_t(y) * frame.pitch[0];
    for (int x = std::max(0, cx - ri); x < std::min<int>(static_cast<int>(width_), cx + ri); ++x) {
      const int d2 = (x - cx) * (x - cx) + (y - cy) * (y - cy);
      if (d2 > ri * ri) continue;
      const bool ring = d2 > (ri - 4) * (ri - 4);
      row[std::size_t(x) * 2 + lumaOffset] = ring ? 20 : static_cast<std::uint8_t>(200 + (x ^ y) % 35);
      const std::size_t chroma = (std::size_t(x) & ~std::size_t{1}) * 2 + (yuyv ? 1 : 0);
      row[chroma] = 90;       // Cb
      row[chroma + 2] = 200;  // Cr: a reddish ball
    }
  }
  drawTimecode(frame, tc);
}

}  // namespace zerohop
