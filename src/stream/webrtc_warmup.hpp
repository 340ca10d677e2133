#pragma once
// Warms, once per process, what the first WebRTC session would otherwise load while its viewer waits
// for the answer: the GStreamer plugins of a session's elements (loading the .so,
// class initialisation, libnice's agent) and, by far the largest part, the process's DTLS certificate.
// gst-plugins-bad's dtls element makes one RSA key and self-signed certificate per process, in the
// first dtlsdec created (every later one shares it): 0.3-1 s of one core, which the first POST /whep
// used to pay (docs/benchmarks-latency.md, "First viewer").
// Thread-safety: thread-safe. WebrtcWarmup is thread-bound (construct and destroy on one thread).

#include <thread>

namespace zerohop::stream {

/// Does the warm-up the first time it is called in this process; later and concurrent calls return
/// once it has been done. Never throws (an element that cannot be made is left to the session, which
/// reports it).
void warmUpWebrtcOnce();
/// Whether warmUpWebrtcOnce() has finished in this process.
bool webrtcWarm() noexcept;
/// Returns once a warm-up that has started in this process (on any thread) has finished; at once when
/// none has started (it starts none). True when it had to wait.
bool waitForStartedWarmUp();

/// warmUpWebrtcOnce() on a thread of its own, so that starting a server does not wait for it. The
/// destructor joins that thread: destroyed within a second of its start, it waits for the rest.
class WebrtcWarmup {
 public:
  WebrtcWarmup();
  ~WebrtcWarmup();
  WebrtcWarmup(const WebrtcWarmup&) = delete;
  WebrtcWarmup& operator=(const WebrtcWarmup&) = delete;

 private:
  std::thread thread_;
};

}  // namespace zerohop::stream
