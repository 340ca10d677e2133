#pragma once
// httplib::Server whose connections cannot hold a worker thread for long: every request must
// arrive whole (request line, headers, body) within a deadline, and every response must be written
// within another, however slowly the client trickles bytes or reads (cpp-httplib's own read/write
// timeouts restart with every byte, so a slow-loris client would keep a thread forever). A client
// past a deadline has its connection closed (after httplib's 400 if its request was cut short
// mid-headers). Keep-alive serves at most
// keep_alive_max_count requests, and only those already sent (keep_alive_timeout applies between them).
// Thread-safety: as httplib::Server (configure, then listen on one thread; stop() from any).

#include <httplib.h>

#include <chrono>
#include <cstddef>

namespace zerohop::stream {

class DeadlineHttpServer : public httplib::Server {
 public:
  /// `workers`: size of the thread pool that serves connections (each holds one thread while open).
  DeadlineHttpServer(std::chrono::milliseconds requestDeadline, std::chrono::milliseconds responseDeadline,
                     std::size_t workers);

  std::chrono::milliseconds requestDeadline() const { return requestDeadline_; }
  std::chrono::milliseconds responseDeadline() const { return responseDeadline_; }

 private:
  bool process_and_close_socket(socket_t sock) override;

  const std::chrono::milliseconds requestDeadline_;
  const std::chrono::milliseconds responseDeadline_;
};

}  // namespace zerohop::stream
