#pragma once
// Test helper for the encoder tests: kFrames consecutive test-camera frames converted to I420 and NV12,
// captured once per process (inline: the x264 and VP8 tests of one executable share them), and FFmpeg's
// log kept to warnings.
// Thread-safety: cameraFrames() is thread-safe (a function-local static); the frames are read-only.

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <vector>

extern "C" {
#include <libavutil/log.h>
}

#include "convert/test_image.hpp"
#include "convert/converter.hpp"
#include "zerohop/encoder.hpp"
#include "zerohop/source.hpp"

namespace zerohop::testing {

// libx264 and libvpx print their settings at AV_LOG_INFO for every encoder; keep warnings only.
inline const bool kQuietFfmpeg = [] {
  av_log_set_level(AV_LOG_WARNING);
  return true;
}();

inline constexpr std::uint32_t kW = 640, kH = 360;
inline constexpr double kFps = 30;
inline constexpr std::size_t kFrames = 150;

/// An encoder config for these frames (640x360 at kFps): `encoder` at `kbps`, an IDR every `keyint`.
inline EncoderConfig cameraConfig(const char* encoder, std::uint32_t kbps, std::uint32_t keyint) {
  EncoderConfig c;
  c.encoder = encoder;
  c.width = kW;
  c.height = kH;
  c.fps = kFps;
  c.bitrateKbps = kbps;
  c.keyframeIntervalFrames = keyint;
  return c;
}

/// kFrames consecutive test-camera frames converted to I420 and NV12, captured once per process.
/// The camera runs at 120 frames/s only to keep the test short (its picture is a function of the
/// frame number, not of time); the encoder is told 30 frames/s, which is what its rate control uses.
struct CameraFrames {
  std::vector<TestImage> i420, nv12;
};

inline const CameraFrames& cameraFrames() {
  static const CameraFrames frames = [] {
    CameraFrames f;
    auto camera = openSource(parseSourceSpec("test:640x360@120"));
    auto converter = makeCpuConverter();
    while (f.i420.size() < kFrames) {
      auto lease = camera->next(std::chrono::milliseconds(1000));
      if (!lease) continue;
      f.i420.emplace_back(PixelFormat::kI420, kW, kH, 32);
      converter->convert(lease->frame(), f.i420.back().frame());
      f.nv12.emplace_back(PixelFormat::kNV12, kW, kH);
      converter->convert(lease->frame(), f.nv12.back().frame());
    }
    return f;
  }();
  return frames;
}

}  // namespace zerohop::testing
