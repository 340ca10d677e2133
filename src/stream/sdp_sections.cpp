#include "stream/sdp_sections.hpp"

#include <algorithm>

#include "stream/sdp_words.hpp"
#include "zerohop/error.hpp"

namespace zerohop::stream {
namespace {

// One line of the text without its line ending, and the line with it.
struct Line {
  std::string_view bare;
  std::string_view whole;
};

std::vector<Line> lines(std::string_view text) {
  std::vector<Line> out;
  std::size_t pos = 0;
  while (pos < text.size()) {
    std::size_t nl = text.find('\n', pos);
    const std::size_t end = nl == std::string_view::npos ? text.size() : nl + 1;
    std::string_view bare = text.substr(pos, (nl == std::string_view::npos ? text.size() : nl) - pos);
    if (!bare.empty() && bare.back() == '\r') bare.remove_suffix(1);
    out.push_back(Line{bare, text.substr(pos, end - pos)});
    pos = end;
  }
  return out;
}

bool startsWith(std::string_view s, std::string_view prefix) { return s.substr(0, prefix.size()) == prefix; }

// The answer's rejection of the m-section whose lines are `section` (its m= line first).
std::string rejected(const std::vector<Line>& section, std::string& kind) {
  const auto words = splitSpaces(section.front().bare.substr(2));
  kind = words.empty() ? std::string("?") : std::string(words[0]);
  std::string m = "m=" + kind + " 0";
  for (std::size_t i = 2; i < words.size(); ++i) m += " " + std::string(words[i]);
  if (words.size() < 4) m += words.size() < 3 ? " UDP/TLS/RTP/SAVPF 0" : " 0";  // an m= line needs a format
  std::string out = m + "\r\nc=IN IP4 0.0.0.0\r\n";
  for (const Line& l : section)
    if (startsWith(l.bare, "a=mid:")) out += std::string(l.bare) + "\r\n";
  return out;
}

}  // namespace

OfferCut keepOnlySection(std::string_view offer, int keepIndex) { return keepSections(offer, keepIndex, -1); }

OfferCut keepSections(std::string_view offer, int first, int second) {
  const std::vector<Line> all = lines(offer);
  std::vector<Line> session;
  std::vector<std::vector<Line>> sections;
  for (const Line& l : all) {
    if (startsWith(l.bare, "m=")) sections.emplace_back();
    (sections.empty() ? session : sections.back()).push_back(l);
  }
  std::vector<std::size_t> keep;
  for (const int index : {first, second}) {
    if (index < 0 && index == second) continue;
    if (index < 0 || static_cast<std::size_t>(index) >= sections.size()) {
      throw Error(Errc::kInvalidArgument, "the offer has no m-section number " + std::to_string(index));
    }
    keep.push_back(static_cast<std::size_t>(index));
  }
  if (keep.size() == 2 && keep[0] == keep[1]) keep.pop_back();
  if (keep.size() == 2 && keep[1] < keep[0]) std::swap(keep[0], keep[1]);
  std::vector<std::string> mids;
  for (const std::size_t k : keep) {
    std::string mid;
    for (const Line& l : sections[k])
      if (startsWith(l.bare, "a=mid:")) mid = std::string(l.bare.substr(6));
    if (mid.empty()) {
      throw Error(Errc::kInvalidArgument,
                  "malformed SDP offer: its " + std::string(k == static_cast<std::size_t>(first) ? "video" : "audio") +
                      " m-line has no a=mid (WebRTC gives every m-section one, RFC 8829 §5.2.1)");
    }
    mids.push_back(std::move(mid));
  }

  OfferCut cut;
  for (const Line& l : session) {
    if (!startsWith(l.bare, "a=group:BUNDLE")) {
      cut.offer += l.whole;
      continue;
    }
    const auto words = splitSpaces(l.bare.substr(2));
    std::string group;
    for (std::size_t i = 1; i < words.size(); ++i)
      for (const std::string& mid : mids)
        if (words[i] == mid) group += " " + mid;
    if (!group.empty()) cut.offer += "a=group:BUNDLE" + group + "\r\n";
  }
  for (const std::size_t k : keep) {
    for (const Line& l : sections[k]) cut.offer += l.whole;
    if (!cut.offer.empty() && cut.offer.back() != '\n') cut.offer += "\r\n";
  }
  for (std::size_t i = 0; i < sections.size(); ++i) {
    if (std::find(keep.begin(), keep.end(), i) != keep.end()) continue;
    std::string kind;
    std::string text = rejected(sections[i], kind);
    cut.rejectedKinds.push_back(std::move(kind));
    (i < keep.front() ? cut.before : i < keep.back() ? cut.between : cut.after).push_back(std::move(text));
  }
  return cut;
}

std::string withRejectedSections(std::string_view answer, const OfferCut& cut) {
  std::string out(answer);
  if (!out.empty() && out.back() != '\n') out += "\r\n";
  // The answer's own ICE credentials, DTLS fingerprint and role go into each rejected section too: a
  // peer such as GStreamer's webrtcbin checks them in every section, rejected or not.
  std::string transport;
  bool inMedia = false;
  for (const Line& l : lines(out)) {
    inMedia = inMedia || startsWith(l.bare, "m=");
    if (inMedia && (startsWith(l.bare, "a=ice-ufrag:") || startsWith(l.bare, "a=ice-pwd:") ||
                    startsWith(l.bare, "a=fingerprint:") || startsWith(l.bare, "a=setup:"))) {
      transport += std::string(l.bare) + "\r\n";
    }
    if (inMedia && startsWith(l.bare, "m=") && !transport.empty()) break;  // the first section's only
  }
  std::string before;
  for (const std::string& s : cut.before) before += s + transport;
  std::size_t firstMedia = startsWith(out, "m=") ? 0 : out.find("\nm=");
  if (firstMedia == std::string::npos) {
    firstMedia = out.size();
  } else if (firstMedia != 0) {
    ++firstMedia;
  }
  if (!cut.between.empty()) {
    // Before the answer's second m-section (webrtcbin answers the kept sections in offer order).
    const std::size_t second = out.find("\nm=", firstMedia == std::string::npos ? 0 : firstMedia + 1);
    std::string between;
    for (const std::string& s : cut.between) between += s + transport;
    if (second == std::string::npos) {
      out += between;
    } else {
      out.insert(second + 1, between);
    }
  }
  out.insert(firstMedia, before);
  for (const std::string& s : cut.after) out += s + transport;
  return out;
}

}  // namespace zerohop::stream
