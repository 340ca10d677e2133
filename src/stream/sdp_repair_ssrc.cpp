#include "stream/sdp_repair_ssrc.hpp"

#include <algorithm>
#include <set>

#include "stream/sdp_words.hpp"

namespace zerohop::stream {
namespace {

constexpr std::string_view kFidGroup = "a=ssrc-group:FID ";
constexpr std::string_view kSsrc = "a=ssrc:";
constexpr std::string_view kSsrcAny = "a=ssrc";  // a=ssrc: and a=ssrc-group:

// The lines of `sdp`, each with its line ending, the last one possibly without.
std::vector<std::string_view> linesOf(std::string_view sdp) {
  std::vector<std::string_view> lines;
  while (!sdp.empty()) {
    const std::size_t end = sdp.find('\n');
    const std::size_t len = end == std::string_view::npos ? sdp.size() : end + 1;
    lines.push_back(sdp.substr(0, len));
    sdp.remove_prefix(len);
  }
  return lines;
}

std::string_view withoutEnding(std::string_view line) {
  while (!line.empty() && (line.back() == '\n' || line.back() == '\r')) line.remove_suffix(1);
  return line;
}

bool startsWith(std::string_view s, std::string_view prefix) {
  return s.substr(0, prefix.size()) == prefix;
}

// The lines of `sdp` grouped by media section: [0] before the first m= line, then one per m= line.
std::vector<std::vector<std::string_view>> sectionsOf(std::string_view sdp) {
  std::vector<std::vector<std::string_view>> sections(1);
  for (std::string_view line : linesOf(sdp)) {
    if (startsWith(line, "m=")) sections.emplace_back();
    sections.back().push_back(line);
  }
  return sections;
}

}  // namespace

RepairSsrcLines takeRepairSsrcLines(std::string_view sdp) {
  const auto sections = sectionsOf(sdp);
  std::set<std::string_view> repair;  // as written in the FID lines, compared word for word below
  for (const auto& section : sections) {
    for (std::string_view line : section) {
      line = withoutEnding(line);
      if (!startsWith(line, kFidGroup)) continue;
      const std::vector<std::string_view> ssrcs = splitSpaces(line.substr(kFidGroup.size()));
      for (std::size_t i = 1; i < ssrcs.size(); ++i) repair.insert(ssrcs[i]);
    }
  }
  RepairSsrcLines split;
  split.kept.reserve(sdp.size());
  for (const auto& section : sections) {
    std::vector<std::string>& taken = split.taken.emplace_back();
    for (std::string_view line : section) {
      const std::string_view bare = withoutEnding(line);
      if (startsWith(bare, kSsrc)) {
        const std::vector<std::string_view> w = splitSpaces(bare.substr(kSsrc.size()));
        if (!w.empty() && repair.count(w.front())) {
          taken.emplace_back(bare);
          continue;
        }
      }
      split.kept += line;
    }
  }
  return split;
}

std::string withRepairSsrcLines(std::string_view sdp, const RepairSsrcLines& split) {
  const auto sections = sectionsOf(sdp);
  std::string out;
  out.reserve(sdp.size() + 256);
  for (std::size_t s = 0; s < sections.size(); ++s) {
    const auto& lines = sections[s];
    const std::vector<std::string>* taken = s < split.taken.size() ? &split.taken[s] : nullptr;
    std::size_t after = lines.size();  // put them after this many lines
    if (taken && !taken->empty()) {
      for (std::size_t i = lines.size(); i-- > 0;) {
        if (startsWith(lines[i], kSsrcAny)) {
          after = i + 1;
          break;
        }
      }
    }
    for (std::size_t i = 0; i <= lines.size(); ++i) {
      if (i == after && taken && !taken->empty()) {
        if (!out.empty() && out.back() != '\n') out += "\r\n";  // an unterminated last line
        for (const std::string& line : *taken) out += line + "\r\n";
      }
      if (i < lines.size()) out += lines[i];
    }
  }
  return out;
}

}  // namespace zerohop::stream
