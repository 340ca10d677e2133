#include "core/payload_check.hpp"

namespace zerohop::core_detail {

const char* mjpegDefect(const std::uint8_t* data, std::size_t size) noexcept {
  if (size == 0 || data == nullptr) return "empty frame";
  if (size < 4 || data[0] != 0xFF || data[1] != 0xD8) return "no SOI marker";
  // Some cameras pad the payload after EOI with zeros; look past a bounded amount of padding.
  std::size_t end = size;
  const std::size_t floor = size > 4096 ? size - 4096 : 2;
  while (end > floor && data[end - 1] == 0x00) --end;
  if (end < 4 || data[end - 2] != 0xFF || data[end - 1] != 0xD9)
    return "no EOI marker (truncated or corrupt)";
  return nullptr;
}

const char* annexBDefect(const std::uint8_t* data, std::size_t size) noexcept {
  if (size == 0 || data == nullptr) return "empty frame";
  std::size_t nal = 0;
  if (size >= 4 && data[0] == 0 && data[1] == 0 && data[2] == 1)
    nal = 3;
  else if (size >= 5 && data[0] == 0 && data[1] == 0 && data[2] == 0 && data[3] == 1)
    nal = 4;
  else
    return "no Annex B start code";
  if (data[nal] & 0x80) return "forbidden_zero_bit set in the first NAL header";
  return nullptr;
}

}  // namespace zerohop::core_detail
