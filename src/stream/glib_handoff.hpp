#pragma once
// GlibHandoff<T>: a value created on one thread and read on another after GLib or GStreamer carried
// its pointer across (a GSource callback, a GstPromise change function, a signal marshalled to
// webrtcbin's thread). Those libraries order the hand-off with their own locks, which on Linux are
// futex-based and invisible to ThreadSanitizer; the release store at construction and the acquire
// load in get() state the same order in a form TSan sees, at no real cost.
// Thread-safety: construct on one thread, then get() or destroy from any.

#include <atomic>
#include <utility>

namespace zerohop::stream {

template <typename T>
class GlibHandoff {
 public:
  explicit GlibHandoff(T value) : value_(std::move(value)) {
    published_.store(true, std::memory_order_release);
  }

  // The value may be destroyed on the receiving thread without get() having run there (a GstPromise's
  // destroy notify): the acquire here orders that destruction after the construction, as get() does.
  ~GlibHandoff() { (void)published_.load(std::memory_order_acquire); }
  GlibHandoff(const GlibHandoff&) = delete;
  GlibHandoff& operator=(const GlibHandoff&) = delete;

  T& get() {
    (void)published_.load(std::memory_order_acquire);
    return value_;
  }

 private:
  T value_;
  std::atomic<bool> published_{false};
};

}  // namespace zerohop::stream
