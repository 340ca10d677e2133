#pragma once
// Helpers for the stream tests: the captured Chromium offer and edited variants of it.
// Thread-safety: reentrant.

#include <fstream>
#include <regex>
#include <sstream>
#include <stdexcept>
#include <string>

#include "beside_program.hpp"

namespace zerohop::test {

/// tests/stream/data/chromium_offer.sdp: a recvonly video offer from Chromium 156 (headless),
/// captured with tests/stream/data/capture_offer.py.
inline std::string chromiumOffer() {
  std::ifstream in(zerohop::testing::besideProgram(ZEROHOP_STREAM_TEST_DATA "/chromium_offer.sdp"),
                   std::ios::binary);
  if (!in) throw std::runtime_error("cannot read chromium_offer.sdp");
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

/// The offer with every line matching `lineRegex` removed.
inline std::string withoutLines(const std::string& sdp, const std::string& lineRegex) {
  std::istringstream in(sdp);
  std::string out, line;
  const std::regex re(lineRegex);
  while (std::getline(in, line)) {
    std::string bare = line;
    if (!bare.empty() && bare.back() == '\r') bare.pop_back();
    if (std::regex_match(bare, re)) continue;
    out += bare + "\r\n";
  }
  return out;
}

/// The payload type Chromium's offer gives H264 packetization-mode=1 profile-level-id=42e01f.
inline int offered42e01fPayloadType(const std::string& sdp) {
  const std::regex re(R"(a=fmtp:(\d+) [^\r\n]*packetization-mode=1;profile-level-id=42e01f)");
  std::smatch m;
  if (!std::regex_search(sdp, m, re)) return -1;
  return std::stoi(m[1]);
}

}  // namespace zerohop::test
