// H.264 level selection (ITU-T H.264 Table A-1) and the SDP profile-level-id.
#include <array>
#include <cmath>
#include <cstdio>
#include <string>

#include "zerohop/encoder.hpp"
#include "zerohop/error.hpp"

namespace zerohop {
namespace {

struct LevelLimits {
  int idc;           // level_idc: 31 = level 3.1
  double maxMbps;    // macroblocks per second
  double maxFs;      // macroblocks per frame
  double maxBrKbps;  // baseline/main VCL bitrate, 1000 bit/s units
};

// From 3.1 up: WebRTC's default offer is 42e01f (level 3.1), so no stream goes below it.
constexpr std::array<LevelLimits, 8> kLevels{{
    {31, 108000, 3600, 14000},
    {32, 216000, 5120, 20000},
    {40, 245760, 8192, 20000},
    {41, 245760, 8192, 50000},
    {42, 522240, 8704, 50000},
    {50, 589824, 22080, 135000},
    {51, 983040, 36864, 240000},
    {52, 2073600, 36864, 240000},
}};

}  // namespace

int h264LevelIdc(std::uint32_t width, std::uint32_t height, double fps, std::uint32_t bitrateKbps) {
  const double mbW = std::ceil(width / 16.0);
  const double mbH = std::ceil(height / 16.0);
  const double fs = mbW * mbH;
  for (const auto& l : kLevels) {
    const double maxDim = std::sqrt(l.maxFs * 8.0);  // A.3.1: each side at most sqrt(8 * MaxFS) macroblocks
    if (fs <= l.maxFs && mbW <= maxDim && mbH <= maxDim && fs * fps <= l.maxMbps &&
        bitrateKbps <= l.maxBrKbps) {
      return l.idc;
    }
  }
  throw Error(Errc::kInvalidArgument,
              std::to_string(width) + "x" + std::to_string(height) + "@" + std::to_string(fps) + " at " +
                  std::to_string(bitrateKbps) +
                  " kb/s exceeds H.264 level 5.2; lower the size, frame rate or bitrate");
}

std::string h264ProfileLevelId(const EncoderConfig& config) {
  const int level = h264LevelIdc(config.width, config.height, config.fps, config.bitrateKbps);
  char text[8];
  std::snprintf(text, sizeof text, "42e0%02x", level);
  return text;
}

}  // namespace zerohop
