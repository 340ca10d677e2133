#pragma once
// Parses --listen HOST:PORT.

#include <cstdint>
#include <string>
#include <string_view>

namespace zerohop::cli {

struct ListenAddress {
  std::string host;
  std::uint16_t port = 0;
};

/// "127.0.0.1:8080", "0.0.0.0:9000", "[::1]:8080", ":8080" (= 127.0.0.1). Throws Error(kInvalidArgument).
ListenAddress parseListenAddress(std::string_view text);

}  // namespace zerohop::cli
