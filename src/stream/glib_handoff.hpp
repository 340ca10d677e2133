#pragma once
// GlibHandoff<T>: a value created on one thread and read on another after GLib or GStreamer carried
// its pointer across (a GSource callback, a GstPromise change function, a signal marshalled to
// webrtcbin's thread). Those libraries order the hand-off with their own locks, which on Linux are
// futex-based and invisible to ThreadSanitizer; the release store at construction and the acquire
// load in get() state the same order in a form TSan sees, at no real cost.
// Thread-safety: construct on one thread, then get() from any.

#include <atomic>
#include <utility>

namespace zerohop::stream {

template <typename T>
class GlibHandoff {
 public:
  explicit GlibHandoff(T value) : value_(std::move(value)) {
    published_.store(true, std::memory_order_release);
  }

  T& get() {
    (void)published_.load(std::memory_order_acquire);
    return value_;
  }

 private:
  T value_;
  std::atomic<bool> published_{false};
};

}  // namespace zerohop::stream
