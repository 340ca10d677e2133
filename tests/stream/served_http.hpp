#pragma once
// The DeadlineHttpServer the tests of hostile clients run against (slow_client_test, tls_server_test).
// Thread-safety: as DeadlineHttpServer; timedGet() is reentrant.

#include <httplib.h>

#include <chrono>
#include <cstddef>
#include <memory>
#include <string>
#include <thread>

#include "stream/deadline_http_server.hpp"

namespace zerohop::test {

/// A DeadlineHttpServer with short deadlines on a kernel-chosen loopback port, listening on its own
/// thread: GET /small answers "ok", GET /big 8 MB. With `tls`, HTTPS only, and timedGet() verifies the
/// server against `caCert`.
class Served {
 public:
  using Clock = std::chrono::steady_clock;
  static constexpr std::chrono::milliseconds kRequest{1000};
  static constexpr std::chrono::milliseconds kResponse{1000};
  static constexpr std::size_t kWorkers = 4;

  static stream::HttpServerLimits limits() {
    stream::HttpServerLimits l;
    l.idleTimeout = kRequest;
    l.requestDeadline = kRequest;
    l.responseDeadline = kResponse;
    l.fastWorkers = kWorkers;
    return l;
  }

  explicit Served(stream::HttpServerLimits l = limits(), std::shared_ptr<const stream::TlsContext> tls = nullptr,
                  std::string caCert = {})
      : server_(l), caCert_(std::move(caCert)) {
    server_.setTls(std::move(tls));
    server_.Get("/small",
                [](const httplib::Request&, httplib::Response& res) { res.set_content("ok", "text/plain"); });
    server_.Get("/big", [](const httplib::Request&, httplib::Response& res) {
      res.set_content(std::string(8 << 20, 'x'), "application/octet-stream");  // far more than socket buffers
    });
    port_ = server_.bindAndListen("127.0.0.1", 0);
    thread_ = std::thread([this] { server_.run(); });
  }
  ~Served() {
    server_.requestStop();
    thread_.join();
  }
  int port() const { return port_; }
  stream::DeadlineHttpServer& server() { return server_; }

  /// GET /small on a fresh connection; its duration, or -1 s when it failed.
  std::chrono::duration<double> timedGet() {
    httplib::Client cli((server_.tls() ? "https://127.0.0.1:" : "http://127.0.0.1:") + std::to_string(port_));
    if (server_.tls()) {
      cli.set_ca_cert_path(caCert_.c_str());
      cli.enable_server_certificate_verification(true);
    }
    cli.set_read_timeout(10, 0);
    const auto t0 = Clock::now();
    auto r = cli.Get("/small");
    if (!r || r->status != 200 || r->body != "ok") return std::chrono::seconds(-1);
    return Clock::now() - t0;
  }

 private:
  stream::DeadlineHttpServer server_;
  const std::string caCert_;
  int port_ = 0;
  std::thread thread_;
};

}  // namespace zerohop::test
