#include "gpu/nvdec_access_units.hpp"

namespace zerohop::nvdec {
namespace {

// Offset of the next 00 00 01 at or after `from` (size when none).
std::size_t nextStartCode(const std::uint8_t* d, std::size_t size, std::size_t from) {
  for (std::size_t i = from; i + 2 < size; ++i) {
    if (d[i] == 0 && d[i + 1] == 0 && d[i + 2] == 1) return i;
  }
  return size;
}

}  // namespace

std::vector<std::vector<std::uint8_t>> splitAccessUnits(const std::uint8_t* data, std::size_t size,
                                                        bool hevc) {
  std::vector<std::vector<std::uint8_t>> units;
  std::vector<std::uint8_t> current;
  bool haveSlice = false;
  std::size_t sc = nextStartCode(data, size, 0);
  while (sc < size) {
    std::size_t begin = sc;  // include a fourth leading zero (00 00 00 01)
    if (begin > 0 && data[begin - 1] == 0) --begin;
    const std::size_t header = sc + 3;
    std::size_t next = nextStartCode(data, size, header);
    std::size_t end = next;
    if (end < size && end > header && data[end - 1] == 0) --end;  // that zero belongs to the next unit
    if (header < size) {
      bool slice = false, firstSlice = false, beforePicture = false;
      if (hevc) {
        // nal_unit_type in bits 1..6 of a two-byte header; VCL types are 0..31, and the slice segment
        // header's first bit is first_slice_segment_in_pic_flag. VPS, SPS, PPS, AUD and prefix SEI
        // (32..35, 39) come before their picture.
        const int type = (data[header] >> 1) & 0x3F;
        slice = type < 32;
        firstSlice = slice && header + 2 < size && (data[header + 2] & 0x80) != 0;
        beforePicture = (type >= 32 && type <= 35) || type == 39;
      } else {
        const int type = data[header] & 0x1F;
        slice = type == 1 || type == 5;
        // first_mb_in_slice is ue(v): 0 is the single bit 1, so the first bit after the header byte.
        firstSlice = slice && header + 1 < size && (data[header + 1] & 0x80) != 0;
        beforePicture = type == 9 || type == 7 || type == 8 || type == 6;
      }
      const bool startsUnit = haveSlice && (beforePicture || firstSlice);
      if (startsUnit) {
        units.push_back(std::move(current));
        current.clear();
        haveSlice = false;
      }
      haveSlice = haveSlice || slice;
    }
    current.insert(current.end(), data + begin, data + end);
    sc = next;
  }
  if (!current.empty()) units.push_back(std::move(current));
  return units;
}

}  // namespace zerohop::nvdec
