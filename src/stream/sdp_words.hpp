#pragma once
// Internal: the space-separated words of one SDP value ("m=video 9 UDP/TLS/RTP/SAVPF 96 97" after
// "m=", "a=ssrc-group:FID 1 2" after the attribute name). Runs of spaces separate; no word is empty.
// Thread-safety: reentrant.

#include <string_view>
#include <vector>

namespace zerohop::stream {

inline std::vector<std::string_view> splitSpaces(std::string_view s) {
  std::vector<std::string_view> out;
  std::size_t i = 0;
  while (i < s.size()) {
    while (i < s.size() && s[i] == ' ') ++i;
    std::size_t j = i;
    while (j < s.size() && s[j] != ' ') ++j;
    if (j > i) out.push_back(s.substr(i, j - i));
    i = j;
  }
  return out;
}

}  // namespace zerohop::stream
