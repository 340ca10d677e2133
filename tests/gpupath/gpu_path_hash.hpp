#pragma once
// FNV-1a over tight planes: how the gpu path test and its reader process compare frames.
#include <cstdint>
#include <vector>

namespace zerohop::test {

inline std::uint64_t hashPlanes(const std::vector<std::vector<std::uint8_t>>& planes) {
  std::uint64_t h = 1469598103934665603ull;
  for (const auto& plane : planes) {
    for (const std::uint8_t b : plane) {
      h ^= b;
      h *= 1099511628211ull;
    }
  }
  return h;
}

}  // namespace zerohop::test
