#include "stream/sdp_extmap.hpp"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <system_error>

#include "stream/sdp_words.hpp"

namespace zerohop::stream {

void OfferedExtensions::add(std::string_view value) {
  const auto words = splitSpaces(value);
  if (words.size() < 2) return;
  std::string_view idText = words[0];
  std::string direction = "sendrecv";
  if (const auto slash = idText.find('/'); slash != std::string_view::npos) {
    direction.assign(idText.substr(slash + 1));
    idText = idText.substr(0, slash);
  }
  int id = 0;
  const auto [end, ec] = std::from_chars(idText.data(), idText.data() + idText.size(), id);
  if (ec != std::errc() || end != idText.data() + idText.size() || id < 1 || id > 255 || id == 15) return;
  const bool idSeen = std::find(idsSeen_.begin(), idsSeen_.end(), id) != idsSeen_.end();
  idsSeen_.push_back(id);
  if (idSeen) {  // an id means one thing: drop it altogether
    kept_.erase(
        std::remove_if(kept_.begin(), kept_.end(), [id](const RtpExtension& e) { return e.id == id; }),
        kept_.end());
    return;
  }
  std::transform(direction.begin(), direction.end(), direction.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  if (direction != "sendrecv" && direction != "recvonly") return;  // the offerer would not receive it
  const std::string uri(words[1]);
  if (std::find(wanted_.begin(), wanted_.end(), uri) == wanted_.end()) return;
  for (const RtpExtension& e : kept_)
    if (e.uri == uri) return;
  kept_.push_back(RtpExtension{id, uri});
}

}  // namespace zerohop::stream
