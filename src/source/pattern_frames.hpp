#pragma once
// Renders the built-in test camera's picture: a textured, scrolling background with per-frame
// sensor-like noise and a moving object (so an encoder pays what it pays for a real camera), and
// the timecode strip. Pure logic on host buffers; no device.
// Thread-safety: thread-bound (one renderer per source).

#include <cstdint>
#include <random>
#include <vector>

#include "zerohop/frame.hpp"
#include "zerohop/timecode.hpp"

namespace zerohop {

class PatternFrames {
 public:
  /// `format` is kYUYV or kUYVY (what USB cameras deliver raw). Throws Error otherwise.
  PatternFrames(PixelFormat format, std::uint32_t width, std::uint32_t height);
  /// Renders frame number `index` into `frame` (host memory, matching format and size).
  void render(Frame& frame, std::uint64_t index, const Timecode& tc);

 private:
  PixelFormat format_;
  std::uint32_t width_;
  std::uint32_t height_;
  std::uint32_t texWidth_;   // pixels, even
  std::uint32_t texHeight_;
  std::vector<std::uint8_t> texture_;  // packed 4:2:2 in the output's byte order, texWidth_*2 bytes a row
  // Sensor noise: a long table of small signed values split into what is added and what is taken
  // away (one of the two is 0 at each byte, both are 0 at chroma bytes), for saturating byte adds.
  std::vector<std::uint8_t> noiseUp_;
  std::vector<std::uint8_t> noiseDown_;
  std::minstd_rand rng_{12345};
};

}  // namespace zerohop
