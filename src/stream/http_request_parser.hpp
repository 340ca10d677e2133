#pragma once
// A strict HTTP/1.1 request-framing check for a server that untrusted clients reach: it decides, from
// the bytes received so far, whether one whole request is there, more is needed, or the request is
// refused (and with which status). It accepts only one unambiguous framing: CRLF line ends, no
// folded or malformed header lines, at most one Content-Length (digits only) and no
// Transfer-Encoding, no body on GET/HEAD/OPTIONS/DELETE, and limits on the request line, the header
// block, the header count and the body. What it accepts it rewrites as `canonical`: the request
// line, the headers it keeps (Range, Expect, Connection and Keep-Alive are dropped; the server
// answers whole bodies, once, and closes; Accept-Encoding becomes "gzip" where the client takes gzip,
// else goes: cpp-httplib would answer "br" with brotli at its highest quality, ~7 ms of CPU for a 5 KB
// /stats that each viewer page polls every second, and 80 ms for the page's script) and exactly
// Content-Length bytes of body, so whatever reads `canonical` next (cpp-httplib's lenient parser)
// cannot see a different request.
// Pure function of its input (no sockets): reentrant. Fuzzed by fuzz/http_request_fuzzer.cpp.

#include <cstddef>
#include <string>
#include <string_view>

namespace zerohop::stream {

struct HttpRequestLimits {
  std::size_t maxRequestLine = 4096;     ///< method, target and version; past it 414
  std::size_t maxHeaderBytes = 16384;    ///< request line plus every header line; past it 431
  std::size_t maxHeaders = 64;           ///< header lines; past it 431
  std::size_t maxBodyBytes = 64 * 1024;  ///< Content-Length past it 413
};

struct HttpRequestFraming {
  enum class State { kNeedMore, kComplete, kRefused };
  State state = State::kNeedMore;
  int status = 0;       ///< kRefused: the status to answer (400, 411, 413, 414, 417, 431, 501, 505)
  std::string reason;   ///< kRefused: why, for the body of the answer
  std::string method;   ///< once the request line is whole
  std::string target;   ///< once the request line is whole
  bool expectContinue = false;  ///< headers whole, "Expect: 100-continue", body still to come
  /// kNeedMore with the headers whole: the size the request will have with its body (so a caller
  /// need not frame again before that many bytes are there); 0 otherwise.
  std::size_t wholeBytes = 0;
  std::string canonical;        ///< kComplete: the request as the routes will read it
};

/// Looks at the first bytes of a connection (everything received so far).
HttpRequestFraming frameHttpRequest(std::string_view received, const HttpRequestLimits& limits);

}  // namespace zerohop::stream
