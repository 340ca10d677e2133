#include "stream/simulcast_sdp.hpp"

#include <algorithm>

#include "stream/sdp_words.hpp"

namespace zerohop::stream {
namespace {

std::vector<std::string_view> splitOn(std::string_view s, char separator) {
  std::vector<std::string_view> out;
  std::size_t i = 0;
  for (;;) {
    const std::size_t j = s.find(separator, i);
    out.push_back(s.substr(i, j == std::string_view::npos ? std::string_view::npos : j - i));
    if (j == std::string_view::npos) return out;
    i = j + 1;
  }
}

// The lines of an SDP, each without its CR LF (or LF).
std::vector<std::string_view> lines(std::string_view sdp) {
  std::vector<std::string_view> out;
  std::size_t i = 0;
  while (i < sdp.size()) {
    std::size_t end = sdp.find('\n', i);
    if (end == std::string_view::npos) end = sdp.size();
    std::string_view line = sdp.substr(i, end - i);
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    out.push_back(line);
    i = end + 1;
  }
  return out;
}

struct Section {
  bool video = false;
  std::vector<std::string_view> simulcastRecv;  // the a=simulcast:recv list, as written
  std::vector<std::string_view> ridsRecv;       // ids of a=rid:<id> recv
};

// The streams of an a=simulcast value ("recv h;m;l", "send 1;2 recv 3", RFC 8853 §5.1) in direction `dir`.
std::vector<std::string_view> simulcastList(std::string_view value, std::string_view dir) {
  const std::vector<std::string_view> words = splitSpaces(value);
  for (std::size_t i = 0; i + 1 < words.size(); ++i) {
    if (words[i] == dir) return splitOn(words[i + 1], ';');
  }
  return {};
}

}  // namespace

std::string simulcastRid(std::size_t layer) {
  static constexpr const char* kNamed[] = {"h", "m", "l"};
  return layer < 3 ? kNamed[layer] : "r" + std::to_string(layer);
}

std::string firstVideoMid(std::string_view sdp) {
  bool inVideo = false;
  for (std::string_view line : lines(sdp)) {
    if (line.rfind("m=", 0) == 0) {
      inVideo = line.rfind("m=video ", 0) == 0;
    } else if (inVideo && line.rfind("a=mid:", 0) == 0) {
      return std::string(line.substr(6));
    }
  }
  return {};
}

std::vector<std::string> simulcastReceivedRids(std::string_view answer) {
  std::vector<Section> sections;
  for (std::string_view line : lines(answer)) {
    if (line.rfind("m=", 0) == 0) {
      sections.push_back(Section{line.rfind("m=video ", 0) == 0, {}, {}});
    } else if (sections.empty()) {
      continue;  // session-level lines
    } else if (line.rfind("a=simulcast:", 0) == 0) {
      sections.back().simulcastRecv = simulcastList(line.substr(12), "recv");
    } else if (line.rfind("a=rid:", 0) == 0) {
      const std::vector<std::string_view> words = splitSpaces(line.substr(6));
      if (words.size() >= 2 && words[1] == "recv") sections.back().ridsRecv.push_back(words[0]);
    }
  }
  for (const Section& s : sections) {
    if (!s.video || s.simulcastRecv.empty()) continue;
    std::vector<std::string> taken;
    for (std::string_view stream : s.simulcastRecv) {
      std::string_view rid = splitOn(stream, ',').front();  // alternatives: the first is the one sent
      if (rid.empty() || rid.front() == '~') continue;      // paused
      if (std::find(s.ridsRecv.begin(), s.ridsRecv.end(), rid) == s.ridsRecv.end()) continue;
      taken.emplace_back(rid);
    }
    return taken;
  }
  return {};
}

}  // namespace zerohop::stream
