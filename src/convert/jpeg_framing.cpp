#include "jpeg_framing.hpp"

namespace zerohop::convert {
std::size_t jpegTrimmedSize(const std::uint8_t* data, std::size_t size) noexcept {
  while (size > 0 && data[size - 1] == 0x00) --size;
  return size;
}

std::string jpegFramingProblem(const std::uint8_t* data, std::size_t size) {
  if (data == nullptr || size == 0) return "empty frame (0 bytes)";
  if (size < 2 || data[0] != 0xFF || data[1] != 0xD8) return "not a JPEG: no SOI marker (FF D8) at the start";
  const std::size_t trimmed = jpegTrimmedSize(data, size);
  if (trimmed < 4 || data[trimmed - 2] != 0xFF || data[trimmed - 1] != 0xD9) {
    return "truncated JPEG: no EOI marker (FF D9) at the end of " + std::to_string(size) + " bytes";
  }
  return {};
}

}  // namespace zerohop::convert
