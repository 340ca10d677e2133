#include "annexb.hpp"

namespace zerohop::encode {

std::vector<int> nalTypes(const std::uint8_t* data, std::size_t size) {
  std::vector<int> types;
  // A start code is 00 00 01 (a 4-byte 00 00 00 01 ends with the same three bytes).
  for (std::size_t i = 0; i + 3 < size; ++i) {
    if (data[i] == 0 && data[i + 1] == 0 && data[i + 2] == 1) {
      types.push_back(data[i + 3] & 0x1F);
      i += 2;
    }
  }
  return types;
}

bool containsIdr(const std::uint8_t* data, std::size_t size) {
  for (int t : nalTypes(data, size)) {
    if (t == 5) return true;
  }
  return false;
}

}  // namespace zerohop::encode
