// The HTTP front's request-framing check (what DeadlineHttpServer runs on every byte a client sends
// before a request reaches the routes): any bytes end in "need more", a refusal with a 4xx/5xx, or
// one whole request whose canonical form frames the same way again; nothing crashes.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "stream/http_request_parser.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using zerohop::stream::HttpRequestFraming;
  const zerohop::stream::HttpRequestLimits limits;
  const std::string_view in(reinterpret_cast<const char*>(data), size);
  const HttpRequestFraming f = zerohop::stream::frameHttpRequest(in, limits);
  if (f.state == HttpRequestFraming::State::kRefused && (f.status < 400 || f.status > 599)) __builtin_trap();
  // "Need more" promises a size past what is there (the server does not frame again before it).
  if (f.state == HttpRequestFraming::State::kNeedMore && f.wholeBytes != 0 && f.wholeBytes <= in.size()) __builtin_trap();
  if (f.state == HttpRequestFraming::State::kComplete) {
    // What the routes read is itself one whole, unambiguous request, byte for byte the same again.
    const HttpRequestFraming again = zerohop::stream::frameHttpRequest(f.canonical, limits);
    if (again.state != HttpRequestFraming::State::kComplete || again.canonical != f.canonical) __builtin_trap();
    if (f.canonical.size() > in.size() + 128) __builtin_trap();
  }
  return 0;
}
