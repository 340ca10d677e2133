#pragma once
// Converts an uncompressed frame (YUYV, UYVY, NV12, I420, RGB24, BGRx, RGBA) into an I420 or NV12
// frame of the same size with libyuv. RGB becomes BT.601 limited range; YUV keeps its values.
// Thread-safety: thread-bound (keeps scratch chroma planes).

#include <cstdint>
#include <vector>

#include "zerohop/frame.hpp"

namespace zerohop::convert {

class RawConverter {
 public:
  /// Both frames are host memory of the same size, planes checked by the caller.
  /// Throws Error(kUnsupported) for a source format it cannot convert.
  void convert(const Frame& src, Frame& dst);

 private:
  std::vector<std::uint8_t> chroma_;  // U, V scratch for RGB24 -> NV12
};

/// True if RawConverter handles `format` as a source.
bool isRawSource(PixelFormat format) noexcept;

}  // namespace zerohop::convert
