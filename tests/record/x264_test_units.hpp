#pragma once
// Access units for the recording tests: a moving pattern through x264 (zerohop::makeEncoder) at 30 fps,
// 320x240, an IDR every `keyint` frames, each stamped with its capture time (1 s + n frame periods) and a
// wall clock. Thread-safety: reentrant.

#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <vector>

#include "zerohop/encoder.hpp"

namespace zerohop::testing {

inline constexpr std::uint32_t kUnitsWidth = 320, kUnitsHeight = 240;
inline constexpr std::int64_t kUnitsFrameNs = 33'333'333;

inline std::vector<EncodedUnitPtr> encodeX264Units(int count, std::uint32_t keyint) {
  constexpr std::uint32_t kW = kUnitsWidth, kH = kUnitsHeight;
  EncoderConfig cfg;
  cfg.width = kW;
  cfg.height = kH;
  cfg.fps = 30;
  cfg.bitrateKbps = 500;
  cfg.keyframeIntervalFrames = keyint;
  auto enc = makeEncoder(cfg);
  const auto layout = computeLayout(PixelFormat::kI420, kW, kH);
  std::vector<std::uint8_t> buf(layout.totalBytes);
  std::vector<EncodedUnitPtr> units;
  for (int i = 0; i < count; ++i) {
    for (std::uint32_t y = 0; y < kH; ++y) {
      for (std::uint32_t x = 0; x < kW; ++x) buf[y * kW + x] = static_cast<std::uint8_t>(x + y + 4 * i);
    }
    std::memset(buf.data() + kW * kH, 128, layout.totalBytes - kW * kH);
    Frame f;
    bindLayout(f, layout, buf.data(), MemoryKind::kHost);
    f.format = PixelFormat::kI420;
    f.width = kW;
    f.height = kH;
    f.sequence = static_cast<std::uint64_t>(i);
    f.times.mark(Stage::kCapture, 1'000'000'000 + i * kUnitsFrameNs);
    f.wallClockMs = 1'700'000'000'000 + i * 33;
    auto u = enc->encode(f, false);
    EXPECT_TRUE(u);
    units.push_back(u);
  }
  return units;
}

}  // namespace zerohop::testing
