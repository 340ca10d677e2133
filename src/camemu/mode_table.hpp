#pragma once
// What the emulated camera offers (formats x frame sizes x frame rates, like a UVC camera's
// descriptors) and the V4L2 wire layout of each mode. Pure logic, no device.
// Thread-safety: immutable after construction; reentrant.

#include <cstdint>
#include <vector>

#include "camemu/camemu_config.hpp"

namespace zerohop::camemu {

struct FrameSize {
  std::uint32_t width = 0;
  std::uint32_t height = 0;
  bool operator==(const FrameSize&) const = default;
};

/// bytesperline / sizeimage as the driver reports them.
struct WireFormat {
  PixelFormat format = PixelFormat::kUnknown;
  std::uint32_t width = 0;
  std::uint32_t height = 0;
  std::uint32_t bytesPerLine = 0;  ///< 0 for compressed formats
  std::uint32_t sizeImage = 0;     ///< exact for raw formats, the maximum frame size for MJPEG
  bool operator==(const WireFormat&) const = default;
};

class ModeTable {
 public:
  explicit ModeTable(const EmuConfig& config);
  /// Formats in ENUM_FMT order (the configured one first).
  const std::vector<PixelFormat>& formats() const noexcept { return formats_; }
  /// Sizes in ENUM_FRAMESIZES order (the same for every format).
  const std::vector<FrameSize>& sizes() const noexcept { return sizes_; }
  /// Frame rates in ENUM_FRAMEINTERVALS order (fastest first, as uvcvideo lists them).
  const std::vector<std::uint32_t>& rates() const noexcept { return rates_; }
  bool offers(PixelFormat format) const noexcept;
  /// The offered size closest to the request (what S_FMT / TRY_FMT answer).
  FrameSize nearestSize(std::uint32_t width, std::uint32_t height) const noexcept;
  /// The offered rate closest to `fps`.
  std::uint32_t nearestRate(double fps) const noexcept;

 private:
  std::vector<PixelFormat> formats_;
  std::vector<FrameSize> sizes_;
  std::vector<std::uint32_t> rates_;
};

WireFormat wireFormat(PixelFormat format, std::uint32_t width, std::uint32_t height) noexcept;

}  // namespace zerohop::camemu
