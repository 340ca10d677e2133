#include "annexb.hpp"

namespace zerohop::encode {

std::vector<NalUnit> nalUnits(const std::uint8_t* data, std::size_t size) {
  std::vector<NalUnit> units;
  // A start code is 00 00 01; a 4-byte 00 00 00 01 ends with the same three bytes and its leading
  // zero belongs to the unit it starts (not to the payload before it).
  for (std::size_t i = 0; i + 3 < size; ++i) {
    if (data[i] == 0 && data[i + 1] == 0 && data[i + 2] == 1) {
      const std::size_t start = (i > 0 && data[i - 1] == 0) ? i - 1 : i;
      if (!units.empty()) units.back().size = start - units.back().offset;
      units.push_back(NalUnit{start, size - start, data[i + 3] & 0x1F, (data[i + 3] >> 5) & 0x3});
      i += 2;
    }
  }
  return units;
}

std::vector<int> nalTypes(const std::uint8_t* data, std::size_t size) {
  std::vector<int> types;
  for (const NalUnit& n : nalUnits(data, size)) types.push_back(n.type);
  return types;
}

bool containsIdr(const std::uint8_t* data, std::size_t size) {
  for (const NalUnit& n : nalUnits(data, size)) {
    if (n.type == kNalIdr) return true;
  }
  return false;
}

bool isReferenced(const std::uint8_t* data, std::size_t size) {
  for (const NalUnit& n : nalUnits(data, size)) {
    if (n.type >= 1 && n.type <= kNalIdr && n.refIdc != 0) return true;
  }
  return false;
}

}  // namespace zerohop::encode
