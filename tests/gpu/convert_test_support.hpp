#pragma once
// Shared by the GpuConverter tests (gpu_convert_test.cpp, gpu_resample_test.cpp): fresh seeds, the
// colour descriptions and poisons they cycle through, random images and the refusal check.

#include <gtest/gtest.h>

#include <chrono>
#include <random>
#include <string>

#include "cpu_reference.hpp"
#include "zerohop/error.hpp"
#include "zerohop/gpu_convert.hpp"

namespace zerohop::test {

inline constexpr ColorDesc kColors[] = {{ColorMatrix::kBt601, ColorRange::kLimited},
                                        {ColorMatrix::kBt601, ColorRange::kFull},
                                        {ColorMatrix::kBt709, ColorRange::kLimited},
                                        {ColorMatrix::kBt709, ColorRange::kFull}};

/// Where the source frame is and how the converter ingests it: every path convert() has.
struct Ingest {
  MemoryKind memory;
  IngestMode mode;
};
inline constexpr Ingest kIngests[] = {{MemoryKind::kHost, IngestMode::kCopy},
                                      {MemoryKind::kPinned, IngestMode::kCopy},
                                      {MemoryKind::kPinned, IngestMode::kZeroCopy},
                                      {MemoryKind::kHost, IngestMode::kPipelinedCopy},
                                      {MemoryKind::kPinned, IngestMode::kPipelinedCopy},
                                      {MemoryKind::kDevice, IngestMode::kCopy}};

/// Destinations are poisoned with each in turn before a conversion.
inline constexpr std::uint8_t kPoisons[] = {0xCD, 0x5A};

inline bool isRgb(PixelFormat f) {
  return f == PixelFormat::kRGB24 || f == PixelFormat::kBGRx || f == PixelFormat::kRGBA;
}

/// A new seed each run (printed by the tests on failure, so a failure can be replayed).
inline unsigned freshSeed() {
  return static_cast<unsigned>(std::chrono::steady_clock::now().time_since_epoch().count()) ^
         std::random_device{}();
}

/// A tight image of uniformly random bytes.
inline HostImage randomImage(PixelFormat format, std::uint32_t w, std::uint32_t h, std::mt19937& rng) {
  HostImage image = makeImage(format, w, h);
  fillRandom(image, rng);
  return image;
}

/// `fn` must throw zerohop::Error `code` whose message contains `needle`.
template <class Fn>
void expectRefusal(Errc code, const std::string& needle, Fn&& fn) {
  try {
    fn();
    ADD_FAILURE() << "no error; expected one mentioning '" << needle << "'";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), code) << e.what();
    EXPECT_NE(std::string(e.what()).find(needle), std::string::npos) << e.what();
  }
}

}  // namespace zerohop::test
