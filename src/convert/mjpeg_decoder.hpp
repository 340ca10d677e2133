#pragma once
// Decodes one JPEG (an MJPEG camera frame) with libjpeg-turbo straight into an I420 or NV12 frame:
// the JPEG's own YCbCr planes come out of the decoder without colour conversion, luma lands in the
// destination directly, chroma is resampled to 4:2:0 with libyuv where the JPEG is not 4:2:0.
// Output is BT.601 full range (JFIF).
// Thread-safety: thread-bound (owns a libjpeg-turbo handle and scratch planes).

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "zerohop/frame.hpp"

namespace zerohop::convert {

class MjpegDecoder {
 public:
  /// Throws Error(kUnavailable) if libjpeg-turbo cannot create a decompressor.
  MjpegDecoder();
  ~MjpegDecoder();
  MjpegDecoder(const MjpegDecoder&) = delete;
  MjpegDecoder& operator=(const MjpegDecoder&) = delete;
  MjpegDecoder(MjpegDecoder&&) noexcept;
  MjpegDecoder& operator=(MjpegDecoder&&) noexcept;

  /// Decodes `size` bytes at `jpeg` into `dst` (I420 or NV12, host memory, same size as the JPEG).
  /// Throws Error(kInvalidArgument) for an empty, truncated, corrupt or mis-sized JPEG, and
  /// Error(kUnsupported) for a JPEG that is not YCbCr/greyscale (RGB, CMYK) or an unknown subsampling.
  void decode(const std::uint8_t* jpeg, std::size_t size, Frame& dst);

 private:
  void resetHandle();
  [[noreturn]] void fail(const char* call, const std::string& context);

  struct Handle;  // the tjhandle, closed by tjDestroy
  std::unique_ptr<Handle> handle_;
  std::vector<std::uint8_t> chroma_;  // native-subsampling Cb, Cr planes, then 4:2:0 U, V for NV12 output
};

}  // namespace zerohop::convert
