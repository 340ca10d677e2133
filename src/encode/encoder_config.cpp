#include "encoder_config.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <string_view>

#include "zerohop/error.hpp"

namespace zerohop::encode {
namespace {
constexpr std::array<std::string_view, 10> kPresets{"ultrafast", "superfast", "veryfast", "faster",
                                                    "fast",      "medium",    "slow",     "slower",
                                                    "veryslow",  "placebo"};
}  // namespace

bool isX264Preset(const std::string& preset) noexcept {
  for (auto p : kPresets) {
    if (p == preset) return true;
  }
  return false;
}

int oneFrameVbvBits(std::uint32_t kbps, double fps) noexcept {
  const double bits = static_cast<double>(kbps) * 1000 / (fps > 0 ? fps : 1);
  return static_cast<int>(std::max<long long>(1000, std::llround(bits)));
}

std::string x264PresetFor(const EncoderConfig& config) {
  if (config.preset != "auto") return config.preset;
  constexpr double kSuperfastMaxMbRate = 244800;  // 1080p30: 8160 macroblocks x 30
  const double mbs = std::ceil(config.width / 16.0) * std::ceil(config.height / 16.0);
  return mbs * config.fps <= kSuperfastMaxMbRate ? "superfast" : "ultrafast";
}

void validateBitrate(std::uint32_t kbps) {
  if (kbps < kMinBitrateKbps || kbps > kMaxBitrateKbps) {
    throw Error(Errc::kInvalidArgument, "bitrate " + std::to_string(kbps) + " kb/s is outside " +
                                            std::to_string(kMinBitrateKbps) + ".." +
                                            std::to_string(kMaxBitrateKbps) + " kb/s (2500 suits 720p30)");
  }
}

void validateIntraRefresh(const EncoderConfig& c) {
  if (c.intraRefresh && c.keyframeIntervalFrames == 0) {
    throw Error(Errc::kInvalidArgument,
                "intra refresh needs a refresh period: set the keyframe interval (e.g. 60 frames) or turn "
                "intra refresh off");
  }
}

void validateConfig(const EncoderConfig& c) {
  const std::string size = std::to_string(c.width) + "x" + std::to_string(c.height);
  if (c.width < 16 || c.height < 16 || c.width > 8192 || c.height > 8192) {
    throw Error(Errc::kInvalidArgument, "encoder size " + size + " is outside 16x16..8192x8192");
  }
  if (c.width % 2 != 0 || c.height % 2 != 0) {
    throw Error(
        Errc::kInvalidArgument,
        "encoder size " + size + " is odd; H.264 4:2:0 needs an even width and height (e.g. 1280x720)");
  }
  if (!std::isfinite(c.fps) || c.fps <= 0 || c.fps > 240) {
    throw Error(Errc::kInvalidArgument, "encoder frame rate " + std::to_string(c.fps) +
                                            " is outside (0, 240] frames per second (e.g. 30)");
  }
  validateBitrate(c.bitrateKbps);
  validateIntraRefresh(c);
  if (c.threads < 0 || c.threads > 64) {
    throw Error(Errc::kInvalidArgument, "encoder threads " + std::to_string(c.threads) +
                                            " is outside 0..64 (0 = one per core, 1 = lowest latency)");
  }
  if (c.inputFormat != PixelFormat::kI420 && c.inputFormat != PixelFormat::kNV12) {
    throw Error(Errc::kInvalidArgument, "encoder input format " + std::string(formatName(c.inputFormat)) +
                                            " is not accepted; convert to i420 or nv12 first");
  }
  // Throws if the size/rate/bitrate exceed the largest H.264 level.
  (void)h264LevelIdc(c.width, c.height, c.fps, c.bitrateKbps);
}

}  // namespace zerohop::encode
