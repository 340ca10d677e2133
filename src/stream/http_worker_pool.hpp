#pragma once
// DeadlineHttpServer's workers: a fixed set of threads with a bounded queue of whole, checked requests.
// Overflow policy: push() refuses (never blocks) when the queue is full; the accept thread answers 503.
// stop() joins the threads and hands every request still queued to `drop` (which closes it).
// Thread-safety: push() thread-safe; stop() from the owner (also run by the destructor).

#include <condition_variable>
#include <cstddef>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "stream/tls_context.hpp"

namespace zerohop::stream {

/// One request for a worker: its socket (and TLS, null for plain HTTP), the canonical bytes and the peer.
struct HttpJob {
  int fd = -1;
  std::unique_ptr<TlsConnection> tls;  // null: plain HTTP
  std::string request;
  std::string ip;
  int port = 0;
};

class HttpWorkerPool {
 public:
  HttpWorkerPool(std::size_t threads, std::size_t depth, std::function<void(HttpJob&)> serve, std::function<void(HttpJob&)> drop)
      : depth_(depth), serve_(std::move(serve)), drop_(std::move(drop)) {
    for (std::size_t i = 0; i < threads; ++i) threads_.emplace_back([this] { work(); });
  }
  ~HttpWorkerPool() { stop(); }

  bool push(HttpJob&& job) {
    {
      std::lock_guard lock(mutex_);
      if (stopped_ || queue_.size() >= depth_) return false;
      queue_.push_back(std::move(job));
    }
    cv_.notify_one();
    return true;
  }

  void stop() {
    {
      std::lock_guard lock(mutex_);
      stopped_ = true;
    }
    cv_.notify_all();
    for (auto& t : threads_) {
      if (t.joinable()) t.join();
    }
    for (auto& job : queue_) drop_(job);
    queue_.clear();
  }

 private:
  void work() {
    for (;;) {
      HttpJob job;
      {
        std::unique_lock lock(mutex_);
        cv_.wait(lock, [this] { return stopped_ || !queue_.empty(); });
        if (stopped_) return;
        job = std::move(queue_.front());
        queue_.pop_front();
      }
      serve_(job);
    }
  }

  const std::size_t depth_;
  const std::function<void(HttpJob&)> serve_;
  const std::function<void(HttpJob&)> drop_;
  std::mutex mutex_;
  std::condition_variable cv_;
  std::deque<HttpJob> queue_;
  bool stopped_ = false;
  std::vector<std::thread> threads_;
};

}  // namespace zerohop::stream
