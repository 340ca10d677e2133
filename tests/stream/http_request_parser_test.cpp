// frameHttpRequest: the framing an exposed server accepts, and each smuggling and amplification
// variant it refuses (issue 22). Pure bytes in, verdict out.

#include "stream/http_request_parser.hpp"

#include <gtest/gtest.h>

#include <string>

namespace zerohop::stream {
namespace {

using State = HttpRequestFraming::State;

HttpRequestFraming frame(const std::string& bytes) { return frameHttpRequest(bytes, HttpRequestLimits{}); }

TEST(HttpRequestFraming, WholeGetAndPostAreCanonical) {
  auto get = frame("GET /stats HTTP/1.1\r\nHost: x\r\nAccept:  */* \r\n\r\n");
  ASSERT_EQ(get.state, State::kComplete) << get.reason;
  EXPECT_EQ(get.canonical, "GET /stats HTTP/1.1\r\nHost: x\r\nAccept: */*\r\n\r\n");
  auto post = frame("POST /whep HTTP/1.1\r\nContent-Type: application/sdp\r\nContent-Length: 3\r\n\r\nv=0");
  ASSERT_EQ(post.state, State::kComplete) << post.reason;
  EXPECT_EQ(post.canonical, "POST /whep HTTP/1.1\r\nContent-Type: application/sdp\r\nContent-Length: 3\r\n\r\nv=0");
}

TEST(HttpRequestFraming, PartialRequestsNeedMore) {
  EXPECT_EQ(frame("GET /stats HT").state, State::kNeedMore);
  EXPECT_EQ(frame("GET /stats HTTP/1.1\r\nHost: x\r\n").state, State::kNeedMore);
  auto body = frame("POST /whep HTTP/1.1\r\nContent-Length: 10\r\nExpect: 100-continue\r\n\r\nv=0");
  EXPECT_EQ(body.state, State::kNeedMore);
  EXPECT_TRUE(body.expectContinue);
  const std::string head = "POST /whep HTTP/1.1\r\nContent-Length: 10\r\nExpect: 100-continue\r\n\r\n";
  EXPECT_EQ(body.wholeBytes, head.size() + 10) << "the server waits for this many bytes before framing again";
}

TEST(HttpRequestFraming, NothingAfterTheRequestIsKept) {
  // A second request in the same bytes is never part of the canonical one (and the connection closes).
  auto f = frame("GET /stats HTTP/1.1\r\nHost: x\r\n\r\nDELETE /whep/abc HTTP/1.1\r\nHost: x\r\n\r\n");
  ASSERT_EQ(f.state, State::kComplete);
  EXPECT_EQ(f.canonical.find("DELETE"), std::string::npos);
}

TEST(HttpRequestFraming, SmugglingVariantsAreRefused) {
  const char* kSmuggled = "DELETE /whep/abc HTTP/1.1\r\nHost: x\r\n\r\n";
  const std::string len = std::to_string(std::string(kSmuggled).size());
  struct Case {
    std::string bytes;
    int status;
  } cases[] = {
      {"GET / HTTP/1.1\r\nContent-Length: " + len + "\r\n\r\n" + kSmuggled, 400},
      {"OPTIONS /whep HTTP/1.1\r\nContent-Length: " + len + "\r\n\r\n" + kSmuggled, 400},
      {"DELETE /whep/x HTTP/1.1\r\nContent-Length: " + len + "\r\n\r\n" + kSmuggled, 400},
      {"POST /whep HTTP/1.1\r\nContent-Length: 3\r\nContent-Length: " + len + "\r\n\r\nv=0" + kSmuggled, 400},
      {"POST /whep HTTP/1.1\r\nContent-Length: 3, 3\r\n\r\nv=0", 400},
      {"POST /whep HTTP/1.1\r\nContent-Length: +3\r\n\r\nv=0", 400},
      {"POST /whep HTTP/1.1\r\nTransfer-Encoding: chunked\r\nContent-Length: 3\r\n\r\n0\r\n\r\n", 400},
      {"POST /whep HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n", 411},
      {"POST /whep HTTP/1.1\r\n\r\n", 411},
      {"POST /whep HTTP/1.1\r\nContent-Length : 3\r\n\r\nv=0", 400},
      {"POST /whep HTTP/1.1\r\n Content-Length: 3\r\n\r\nv=0", 400},
      {"POST /whep HTTP/1.1\r\nX: a\r\n\tContent-Length: 3\r\n\r\nv=0", 400},
      {"POST /whep HTTP/1.1\nContent-Length: 3\n\nv=0", 400},
      {"POST /whep HTTP/1.1\r\nContent-Length: 3\nX: y\r\n\r\nv=0", 400},
      {"POST /whep HTTP/1.1\r\nX: a\rContent-Length: 3\r\n\r\nv=0", 400},
      {"POST /whep HTTP/1.1\r\nHost: a\r\nHost: b\r\nContent-Length: 0\r\n\r\n", 400},
      {"GET http://evil/ HTTP/1.1\r\n\r\n", 400},
      {"GET / HTTP/2.0\r\n\r\n", 505},
      {"TRACE / HTTP/1.1\r\n\r\n", 501},
      {"get / HTTP/1.1\r\n\r\n", 400},
      {"GET / HTTP/1.1\r\nExpect: 200-ok\r\n\r\n", 417},
  };
  for (auto& c : cases) {
    auto f = frame(c.bytes);
    EXPECT_EQ(f.state, State::kRefused) << c.bytes;
    EXPECT_EQ(f.status, c.status) << c.bytes << " -> " << f.reason;
    EXPECT_TRUE(f.canonical.empty());
  }
  std::string nul = "GET / HTTP/1.1\r\nX: a";
  nul += '\0';
  nul += "b\r\n\r\n";
  EXPECT_EQ(frame(nul).status, 400);
}

TEST(HttpRequestFraming, LimitsOnLineHeadersAndBody) {
  HttpRequestLimits limits;
  EXPECT_EQ(frame("GET /" + std::string(limits.maxRequestLine, 'a') + " HTTP/1.1\r\n\r\n").status, 414);
  EXPECT_EQ(frame("GET /" + std::string(limits.maxRequestLine, 'a')).status, 414) << "before the line ends";
  std::string many = "GET / HTTP/1.1\r\n";
  for (std::size_t i = 0; i <= limits.maxHeaders; ++i) many += "X: y\r\n";
  EXPECT_EQ(frame(many).status, 431) << "before the header block ends";
  EXPECT_EQ(frame("GET / HTTP/1.1\r\nX: " + std::string(limits.maxHeaderBytes, 'y')).status, 431);
  EXPECT_EQ(frame("POST /whep HTTP/1.1\r\nContent-Length: 65537\r\n\r\n").status, 413);
  EXPECT_EQ(frame("POST /whep HTTP/1.1\r\nContent-Length: 99999999999999999999\r\n\r\n").status, 400);
}

TEST(HttpRequestFraming, RangesAndConnectionOptionsAreDropped) {
  auto f = frame("GET /app.js HTTP/1.1\r\nRange: bytes=0-,0-,0-,0-\r\nConnection: keep-alive\r\nHost: x\r\n\r\n");
  ASSERT_EQ(f.state, State::kComplete);
  EXPECT_EQ(f.canonical, "GET /app.js HTTP/1.1\r\nHost: x\r\n\r\n");
}

TEST(HttpRequestFraming, AcceptEncodingIsNarrowedToGzipOrDropped) {
  auto canonicalWith = [](const std::string& acceptEncoding) {
    return frame("GET /stats HTTP/1.1\r\nHost: x\r\n" + acceptEncoding + "\r\n").canonical;
  };
  const std::string gzip = "GET /stats HTTP/1.1\r\nHost: x\r\nAccept-Encoding: gzip\r\n\r\n";
  const std::string none = "GET /stats HTTP/1.1\r\nHost: x\r\n\r\n";
  EXPECT_EQ(canonicalWith("Accept-Encoding: gzip, deflate, br, zstd\r\n"), gzip) << "Chromium's";
  EXPECT_EQ(canonicalWith("Accept-Encoding: br\r\n"), none);
  EXPECT_EQ(canonicalWith("Accept-Encoding: br;q=1.0, GZIP;q=0.5\r\n"), gzip);
  EXPECT_EQ(canonicalWith("Accept-Encoding: gzip;q=0, br\r\n"), none);
  EXPECT_EQ(canonicalWith("Accept-Encoding: gzip ; q=0.000\r\n"), none);
  EXPECT_EQ(canonicalWith("Accept-Encoding: gzip;q=0.001\r\n"), gzip);
  EXPECT_EQ(canonicalWith("Accept-Encoding: *\r\n"), gzip);
  EXPECT_EQ(canonicalWith("Accept-Encoding: *, gzip;q=0\r\n"), none);
  EXPECT_EQ(canonicalWith("Accept-Encoding: br\r\nAccept-Encoding: x-gzip\r\n"), gzip) << "two lines";
  EXPECT_EQ(canonicalWith("Accept-Encoding: identity\r\n"), none);
  EXPECT_EQ(canonicalWith("Accept-Encoding: \r\n"), none);
  EXPECT_EQ(canonicalWith(""), none);
}

}  // namespace
}  // namespace zerohop::stream
