#include "stream/http_request_parser.hpp"

#include <algorithm>
#include <cctype>
#include <cstdint>
#include <optional>

namespace zerohop::stream {
namespace {

using State = HttpRequestFraming::State;

HttpRequestFraming refused(HttpRequestFraming f, int status, std::string reason) {
  f.state = State::kRefused;
  f.status = status;
  f.reason = std::move(reason);
  f.canonical.clear();
  return f;
}

// RFC 9110 tchar.
bool isTokenChar(unsigned char c) {
  if (std::isalnum(c)) return true;
  switch (c) {
    case '!': case '#': case '$': case '%': case '&': case '\'': case '*': case '+': case '-': case '.':
    case '^': case '_': case '`': case '|': case '~':
      return true;
    default:
      return false;
  }
}

// Field value bytes: visible ASCII, space, tab and obs-text; never CR, LF, NUL or other controls.
bool isValueChar(unsigned char c) {
  return c == '\t' || (c >= 0x20 && c != 0x7f);
}

std::string lower(std::string_view s) {
  std::string out(s);
  std::transform(out.begin(), out.end(), out.begin(), [](unsigned char c) { return std::tolower(c); });
  return out;
}

std::string_view trimmed(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}

// RFC 9110 §12.5.3: does an Accept-Encoding value (every line's, comma-joined) take gzip? Listed with a
// weight above 0, or not listed while "*" is. A weight is zero as "0", "0." or "0.0", "0.00", "0.000".
bool acceptsGzip(std::string_view value) {
  std::optional<bool> gzip, any;
  while (!value.empty()) {
    const std::size_t comma = value.find(',');
    std::string_view item = value.substr(0, comma);
    value.remove_prefix(comma == std::string_view::npos ? value.size() : comma + 1);
    const std::size_t semi = item.find(';');
    const std::string coding = lower(trimmed(item.substr(0, semi)));
    bool positive = true;
    for (std::string_view params = semi == std::string_view::npos ? "" : item.substr(semi + 1); !params.empty();) {
      const std::size_t next = params.find(';');
      const std::string param = lower(trimmed(params.substr(0, next)));
      params.remove_prefix(next == std::string_view::npos ? params.size() : next + 1);
      if (param.rfind("q=", 0) == 0) {
        const std::string_view q = std::string_view(param).substr(2);
        positive = !(!q.empty() && q.size() <= 5 && q.front() == '0' &&
                     (q.size() == 1 || (q[1] == '.' && q.find_first_not_of('0', 2) == std::string_view::npos)));
      }
    }
    if (coding == "gzip" || coding == "x-gzip") gzip = positive;
    if (coding == "*") any = positive;
  }
  return gzip.value_or(any.value_or(false));
}

bool methodMayCarryBody(std::string_view m) {
  return m == "POST" || m == "PATCH" || m == "PUT";
}

}  // namespace

HttpRequestFraming frameHttpRequest(std::string_view in, const HttpRequestLimits& limits) {
  HttpRequestFraming f;

  // A lone LF or CR anywhere in the head is refused below; here: where does each line end?
  const std::size_t lineEnd = in.find("\r\n");
  if (lineEnd == std::string_view::npos) {
    if (in.size() > limits.maxRequestLine) return refused(f, 414, "request line longer than " +
                                                                     std::to_string(limits.maxRequestLine) + " bytes");
    if (in.find('\n') != std::string_view::npos) return refused(f, 400, "request line not ended by CRLF");
    return f;
  }
  if (lineEnd > limits.maxRequestLine) {
    return refused(f, 414, "request line longer than " + std::to_string(limits.maxRequestLine) + " bytes");
  }

  // Request line: METHOD SP origin-form SP HTTP/1.x
  const std::string_view line = in.substr(0, lineEnd);
  const std::size_t sp1 = line.find(' ');
  const std::size_t sp2 = sp1 == std::string_view::npos ? sp1 : line.find(' ', sp1 + 1);
  if (sp1 == 0 || sp2 == std::string_view::npos || line.find(' ', sp2 + 1) != std::string_view::npos) {
    return refused(f, 400, "malformed request line");
  }
  const std::string_view method = line.substr(0, sp1);
  const std::string_view target = line.substr(sp1 + 1, sp2 - sp1 - 1);
  const std::string_view version = line.substr(sp2 + 1);
  if (!std::all_of(method.begin(), method.end(), [](unsigned char c) { return c >= 'A' && c <= 'Z'; })) {
    return refused(f, 400, "malformed request method");
  }
  if (target.empty() || target.front() != '/' ||
      !std::all_of(target.begin(), target.end(), [](unsigned char c) { return c > 0x20 && c < 0x7f; })) {
    return refused(f, 400, "the request target must be a path (origin-form) of visible ASCII");
  }
  if (version != "HTTP/1.1" && version != "HTTP/1.0") {
    return refused(f, 505, "only HTTP/1.1 and HTTP/1.0 are spoken here");
  }
  if (method != "GET" && method != "HEAD" && method != "POST" && method != "DELETE" && method != "PATCH" &&
      method != "OPTIONS") {
    return refused(f, 501, "method " + std::string(method) + " is not served here");
  }
  f.method = method;
  f.target = target;

  // Header block: up to the empty line.
  const std::size_t headEnd = in.find("\r\n\r\n", lineEnd);
  const std::size_t headBytes = headEnd == std::string_view::npos ? in.size() : headEnd + 4;
  if (headBytes > limits.maxHeaderBytes) {
    return refused(f, 431, "request headers over " + std::to_string(limits.maxHeaderBytes) + " bytes");
  }
  const std::string_view head =
      headEnd == std::string_view::npos ? in.substr(lineEnd + 2) : in.substr(lineEnd + 2, headEnd - lineEnd);
  // Even before the block is whole: a bare CR or LF is a framing error, and the count is bounded.
  std::size_t headers = 0;
  for (std::size_t i = 0; i < head.size(); ++i) {
    const char c = head[i];
    if (c == '\r' && i + 1 < head.size() && head[i + 1] != '\n') {
      return refused(f, 400, "a bare CR in the request headers");
    }
    if (c == '\n') {
      if (i == 0 || head[i - 1] != '\r') return refused(f, 400, "a header line not ended by CRLF");
      if (++headers > limits.maxHeaders) {
        return refused(f, 431, "more than " + std::to_string(limits.maxHeaders) + " request headers");
      }
    }
  }
  if (headEnd == std::string_view::npos) return f;

  std::string kept;
  std::string acceptEncoding;  // every Accept-Encoding line's value, comma-joined
  bool sawLength = false, sawTransferEncoding = false, sawHost = false;
  std::uint64_t length = 0;
  std::string_view rest = head;  // "Name: value\r\n" lines; the last one's CRLF is that of the empty line
  while (!rest.empty()) {
    const std::size_t eol = rest.find("\r\n");
    const std::string_view hl = rest.substr(0, eol);
    rest.remove_prefix(eol == std::string_view::npos ? rest.size() : eol + 2);
    if (hl.empty()) break;
    if (hl.front() == ' ' || hl.front() == '\t') return refused(f, 400, "folded header lines are refused");
    const std::size_t colon = hl.find(':');
    if (colon == 0 || colon == std::string_view::npos) return refused(f, 400, "a header line without a name");
    const std::string_view name = hl.substr(0, colon);
    if (!std::all_of(name.begin(), name.end(), [](unsigned char c) { return isTokenChar(c); })) {
      return refused(f, 400, "a malformed header name (no space before the colon)");
    }
    const std::string_view value = trimmed(hl.substr(colon + 1));
    if (!std::all_of(value.begin(), value.end(), [](unsigned char c) { return isValueChar(c); })) {
      return refused(f, 400, "a control character in header " + std::string(name));
    }
    const std::string key = lower(name);
    if (key == "content-length") {
      if (sawLength) return refused(f, 400, "more than one Content-Length");
      if (value.empty() || value.size() > 12 ||
          !std::all_of(value.begin(), value.end(), [](unsigned char c) { return c >= '0' && c <= '9'; })) {
        return refused(f, 400, "Content-Length is not a number");
      }
      sawLength = true;
      length = std::stoull(std::string(value));
      continue;  // written back below
    }
    if (key == "transfer-encoding") {
      sawTransferEncoding = true;
      continue;
    }
    if (key == "host") {
      if (sawHost) return refused(f, 400, "more than one Host");
      sawHost = true;
    }
    if (key == "expect") {
      if (lower(value) != "100-continue") return refused(f, 417, "only Expect: 100-continue is understood");
      f.expectContinue = true;
      continue;
    }
    if (key == "accept-encoding") {
      acceptEncoding.append(acceptEncoding.empty() ? "" : ",").append(value);
      continue;  // written back below, narrowed to gzip
    }
    // Whole bodies, one request per connection: ranges and connection options do not apply.
    if (key == "range" || key == "if-range" || key == "connection" || key == "keep-alive" || key == "upgrade" ||
        key == "te" || key == "trailer") {
      continue;
    }
    kept.append(name).append(": ").append(value).append("\r\n");
  }

  if (sawTransferEncoding) {
    if (sawLength) return refused(f, 400, "both Content-Length and Transfer-Encoding");
    return refused(f, 411, "send the body with a Content-Length header (chunked or unsized bodies are refused)");
  }
  if (!methodMayCarryBody(method)) {
    if (length > 0) return refused(f, 400, "a " + f.method + " request carries no body");
  } else if (!sawLength) {
    return refused(f, 411, "send the body with a Content-Length header (chunked or unsized bodies are refused)");
  }
  if (length > limits.maxBodyBytes) {
    return refused(f, 413, "request body over " + std::to_string(limits.maxBodyBytes) + " bytes; a WHEP offer is a few KB");
  }

  const std::size_t bodyStart = headEnd + 4;
  if (in.size() - bodyStart < length) {  // body still arriving (expectContinue says if it waits)
    f.wholeBytes = bodyStart + length;
    return f;
  }
  f.expectContinue = false;
  f.state = State::kComplete;
  f.canonical.reserve(lineEnd + kept.size() + 64 + length);
  f.canonical.append(line).append("\r\n").append(kept);
  if (acceptsGzip(acceptEncoding)) f.canonical.append("Accept-Encoding: gzip\r\n");
  if (sawLength) f.canonical.append("Content-Length: ").append(std::to_string(length)).append("\r\n");
  f.canonical.append("\r\n").append(in.substr(bodyStart, length));
  return f;
}

}  // namespace zerohop::stream
