#pragma once
// An httplib::Server (for its routes and responses) whose sockets are ours, made for clients that
// may be hostile (docs/exposure.md). One thread owns every connection until its request is whole:
// it accepts, enforces the connection limits (in total and per client address; past them the
// oldest connection still sending its request is closed to make room), reads with an idle deadline
// (first byte) and a request deadline (the whole request), and checks the framing strictly
// (frameHttpRequest: limits on request line, headers and body, no CL+TE, no duplicate
// Content-Length, no body on GET/OPTIONS/DELETE). A refused request is answered and its connection
// closed. A whole request goes to one of two bounded worker pools: `slow` for requests with a
// body (POST /whep may hold a worker while it negotiates), `fast` for the rest (/stats, /metrics,
// the page), so neither can starve the other; a full pool answers 503 + Retry-After at once. A
// worker runs httplib's routing on the checked request and writes the answer within
// responseDeadline; then the connection is closed (one request per connection: nothing a client
// sends after its request is ever read as another one).
// Descriptors: one spare descriptor is kept so that a full table (EMFILE) still lets the server
// accept and close (never a busy loop on the listening socket), and maxConnections is clamped to a
// quarter of RLIMIT_NOFILE so connections cannot take the descriptors sessions need.
// TLS (setTls): the handshake is one more stage of the same state machine, not a blocking call.
// The accept thread drives a non-blocking SSL_do_handshake from its epoll loop (waiting for EPOLLIN
// or EPOLLOUT as OpenSSL asks), then reads the request through SSL_read; the connection stays
// pending meanwhile, so a client that never sends its ClientHello is cut at the idle deadline, one
// that trickles its handshake at the request deadline (both from accept), and each counts against
// the connection limits like any pending connection. A failed handshake is closed (counted in
// tlsFailed); plain HTTP sent to the TLS port gets a plain-text 400 that says to use https://. The
// worker writes the answer with SSL_write under responseDeadline, then sends close_notify.
// Thread-safety: configure (routes, limits), bindAndListen, then run() on one thread; requestStop()
// and the counters from any thread.

#include <httplib.h>

#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

#include "stream/http_request_parser.hpp"

namespace zerohop::stream {

class TlsContext;

struct HttpServerLimits {
  std::chrono::milliseconds idleTimeout{2000};        ///< accept -> first byte of the request
  std::chrono::milliseconds requestDeadline{5000};    ///< accept -> the whole request
  std::chrono::milliseconds responseDeadline{5000};   ///< first byte of the answer -> the last
  std::size_t maxConnections = 512;                   ///< open at once, all clients (clamped, see above)
  std::size_t maxConnectionsPerAddress = 64;          ///< open at once from one client address
  std::size_t slowWorkers = 8;                        ///< requests with a body (POST)
  std::size_t fastWorkers = 4;                        ///< every other request
  std::size_t queuePerPool = 64;                      ///< whole requests waiting for a worker; past it 503
  HttpRequestLimits request;                          ///< request line, headers, body
};

/// What the server refused or cut, since it started (all monotonic).
struct HttpServerCounters {
  std::uint64_t accepted = 0;
  std::uint64_t refusedFraming = 0;    ///< answered 4xx/5xx by frameHttpRequest
  std::uint64_t timedOut = 0;          ///< idle or request deadline passed
  std::uint64_t evicted = 0;           ///< closed to make room under a connection limit
  std::uint64_t busy = 0;              ///< answered 503: worker queue full or no room at all
  std::uint64_t descriptorsFull = 0;   ///< accept() hit EMFILE/ENFILE
  std::uint64_t tlsFailed = 0;         ///< TLS handshake failed (plain HTTP on the TLS port included)
};

class DeadlineHttpServer : public httplib::Server {
 public:
  explicit DeadlineHttpServer(HttpServerLimits limits = {});
  ~DeadlineHttpServer() override;

  /// Binds and listens on host:port (0: a free port). Returns the bound port, or -errno.
  int bindAndListen(const std::string& host, std::uint16_t port);
  /// Serves HTTPS only, with this certificate and key; before run(). Null: plain HTTP (the default).
  void setTls(std::shared_ptr<const TlsContext> tls);
  bool tls() const { return tls_ != nullptr; }
  /// Serves until requestStop(); returns false if the loop failed (logged).
  bool run();
  /// Stops run() and every worker within ~0.1 s (in-flight answers are cut). Idempotent.
  void requestStop();
  bool running() const { return running_.load(); }

  const HttpServerLimits& limits() const { return limits_; }
  /// maxConnections after the RLIMIT_NOFILE clamp.
  std::size_t connectionLimit() const { return connectionLimit_; }
  std::size_t openConnections() const;
  HttpServerCounters counters() const;

 private:
  struct State;
  HttpServerLimits limits_;
  std::size_t connectionLimit_;
  std::atomic<bool> running_{false};
  std::atomic<bool> stopping_{false};
  std::shared_ptr<const TlsContext> tls_;
  std::unique_ptr<State> state_;
};

}  // namespace zerohop::stream
