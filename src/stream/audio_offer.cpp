#include "stream/audio_offer.hpp"

#include <cctype>
#include <charconv>
#include <string>
#include <system_error>

#include "stream/sdp_extmap.hpp"
#include "stream/sdp_words.hpp"

namespace zerohop::stream {
namespace {

std::string lower(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

struct AudioSection {
  int index = -1;
  bool open = false;  // port != 0
  bool receives = true;
  int opus = -1;
  OfferedExtensions extmap{{std::string(kAbsCaptureTimeUri)}};
};

bool usable(const AudioSection& s) { return s.index >= 0 && s.open && s.receives && s.opus >= 0; }

}  // namespace

std::optional<AudioChoice> chooseAudio(std::string_view sdp) {
  int index = -1;
  AudioSection cur;
  std::size_t pos = 0;
  while (pos < sdp.size()) {
    std::size_t nl = sdp.find('\n', pos);
    std::string_view line = sdp.substr(pos, (nl == std::string_view::npos ? sdp.size() : nl) - pos);
    pos = nl == std::string_view::npos ? sdp.size() : nl + 1;
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    if (line.substr(0, 2) == "m=") {
      if (usable(cur)) break;
      ++index;
      cur = AudioSection{};
      const auto words = splitSpaces(line.substr(2));
      if (words.size() < 2 || words[0] != "audio") continue;
      cur.index = index;
      cur.open = words[1] != "0";
      continue;
    }
    if (cur.index < 0) continue;
    if (line == "a=sendonly" || line == "a=inactive") cur.receives = false;
    if (line == "a=bundle-only") cur.open = true;  // port 0 in an offer that bundles it (RFC 8843 §7.2)
    if (line.substr(0, 9) == "a=extmap:") cur.extmap.add(line.substr(9));
    if (line.substr(0, 9) == "a=rtpmap:" && cur.opus < 0) {
      const auto words = splitSpaces(line.substr(9));
      if (words.size() < 2 || lower(words[1]) != "opus/48000/2") continue;
      int pt = -1;
      const auto [end, ec] = std::from_chars(words[0].data(), words[0].data() + words[0].size(), pt);
      if (ec == std::errc() && end == words[0].data() + words[0].size() && pt >= 0 && pt <= 127) cur.opus = pt;
    }
  }
  if (!usable(cur)) return std::nullopt;
  AudioChoice choice{cur.index, cur.opus};
  choice.extensions = cur.extmap.kept();
  return choice;
}

}  // namespace zerohop::stream
