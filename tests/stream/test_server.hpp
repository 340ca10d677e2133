#pragma once
// Helpers for the stream tests that run a real StreamServer: a config on a free loopback port, and an
// HTTP client for it. Thread-safety: reentrant.

#include <httplib.h>

#include "zerohop/stream_server.hpp"

namespace zerohop::test {

/// 127.0.0.1, a port the kernel picks; everything else at its default.
inline StreamConfig loopbackConfig() {
  StreamConfig c;
  c.host = "127.0.0.1";
  c.port = 0;
  return c;
}

/// A client of `server` that waits up to 10 s for an answer (POST /whep negotiates for up to 3 s).
inline httplib::Client clientFor(const StreamServer& server) {
  httplib::Client cli("127.0.0.1", server.port());
  cli.set_read_timeout(10, 0);
  return cli;
}

}  // namespace zerohop::test
