#include "listen_address.hpp"

#include <charconv>

#include "zerohop/error.hpp"

namespace zerohop::cli {

ListenAddress parseListenAddress(std::string_view text) {
  auto bad = [&](const char* why) {
    return Error(Errc::kInvalidArgument, "bad --listen '" + std::string(text) + "': " + why +
                                             "; use HOST:PORT, e.g. --listen 127.0.0.1:8080");
  };
  const auto colon = text.rfind(':');
  if (colon == std::string_view::npos) throw bad("no port");
  ListenAddress a;
  a.host = std::string(text.substr(0, colon));
  if (a.host.size() >= 2 && a.host.front() == '[' && a.host.back() == ']') a.host = a.host.substr(1, a.host.size() - 2);
  if (a.host.empty()) a.host = "127.0.0.1";
  const auto portText = text.substr(colon + 1);
  unsigned port = 0;
  auto [p, ec] = std::from_chars(portText.data(), portText.data() + portText.size(), port);
  if (ec != std::errc() || p != portText.data() + portText.size() || port == 0 || port > 65535)
    throw bad("the port must be a number from 1 to 65535");
  a.port = static_cast<std::uint16_t>(port);
  return a;
}

}  // namespace zerohop::cli
