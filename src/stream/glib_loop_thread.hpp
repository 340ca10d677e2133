#pragma once
// A GMainContext with a GMainLoop running on one thread this object owns. The stream stage runs
// session clean-up and the liveness timer there, so they never run on a GStreamer streaming thread.
// Thread-safety: post() and every() are thread-safe; construction and destruction are not.

#include <functional>
#include <thread>

typedef struct _GMainContext GMainContext;
typedef struct _GMainLoop GMainLoop;

namespace zerohop::stream {

class GlibLoopThread {
 public:
  GlibLoopThread();
  /// Quits the loop and joins the thread; tasks still queued are dropped (destroyed, not run).
  ~GlibLoopThread();
  GlibLoopThread(const GlibLoopThread&) = delete;
  GlibLoopThread& operator=(const GlibLoopThread&) = delete;

  /// Runs `task` once on the loop thread, soon. Never runs it inline.
  void post(std::function<void()> task);
  /// Runs `task` on the loop thread every `intervalMs` until the loop stops.
  void every(unsigned intervalMs, std::function<void()> task);

 private:
  GMainContext* context_ = nullptr;
  GMainLoop* loop_ = nullptr;
  std::thread thread_;
};

}  // namespace zerohop::stream
