#pragma once
// Test support for the nvJPEG decoder: JPEGs made by libjpeg-turbo (camera-like from the test
// camera's picture, or random), libjpeg-turbo's own decode of them as planar Y Cb Cr at the JPEG's
// subsampling, and the documented 4:2:0 reduction written from its formula:
//   chroma(x, y) = (sum of the sx x sy samples of its 2x2 block + n/2) / n, n = sx * sy; grey: 128.
// Thread-safety: thread-bound test helpers.

#include <turbojpeg.h>

#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "cpu_reference.hpp"
#include "jpeg_fixture.hpp"

namespace zerohop::test {

/// libjpeg-turbo's decode: Y, Cb, Cr planes at the JPEG's subsampling, tight pitches.
struct TurboPlanes {
  int width = 0, height = 0, subsamp = -1;
  int chromaWidth = 0, chromaHeight = 0;
  std::vector<std::uint8_t> y, u, v;
};
TurboPlanes turboDecode(const std::vector<std::uint8_t>& jpeg);

/// Random content in the camera's 4:2:2 layout (every byte uniform).
testing::SourcePlanes randomPlanes(std::uint32_t width, std::uint32_t height, std::mt19937& rng);

/// compressJpeg with one of libjpeg-turbo 2.x's environment switches set for the call:
/// TJ_RESTART=<MCU rows> (restart markers), TJ_PROGRESSIVE=1 (progressive scans).
std::vector<std::uint8_t> compressWithTjEnv(const testing::SourcePlanes& p, int subsamp, const char* name,
                                            const char* value);

/// True when the JPEG has a DRI marker with a non-zero interval.
bool hasRestartInterval(const std::vector<std::uint8_t>& jpeg);
/// True when the JPEG's frame header is SOF2 (progressive).
bool isProgressive(const std::vector<std::uint8_t>& jpeg);

/// The expected NV12 / I420 frame (tight pitches) from libjpeg-turbo's planes.
HostImage expected420(const TurboPlanes& t, PixelFormat format);

/// Pixel differences of `got` (decoded, any pitch) against `want` (tight): largest and mean.
struct DiffStats {
  int max = 0;
  double mean = 0;
  int paddingWritten = 0;  ///< padding bytes that lost the poison value
};
DiffStats compare420(const HostImage& got, const HostImage& want, std::uint8_t poison);

std::string subsampName(int subsamp);

}  // namespace zerohop::test
