#include "stream/webrtc_warmup.hpp"

#include <gst/gst.h>

#include <atomic>
#include <chrono>
#include <mutex>
#include <system_error>

#include "stream/gst_handles.hpp"
#include "zerohop/log.hpp"

namespace zerohop::stream {
namespace {

std::atomic<bool> started{false};
std::atomic<bool> warm{false};

// What a ViewerSession makes (appsrc, rtph264pay, webrtcbin) and what webrtcbin makes inside it for
// a transport and its RTP session. dtlssrtpdec (its dtlsdec) generates the process's certificate.
constexpr const char* kFactories[] = {
    "appsrc",     "rtph264pay", "webrtcbin",    "rtpbin",          "dtlssrtpenc", "dtlssrtpdec",
    "nicesrc",    "nicesink",   "srtpenc",      "srtpdec",         "rtprtxsend",  "rtprtxreceive",
    "rtpstorage", "rtpfunnel",  "rtpssrcdemux", "rtpjitterbuffer", "rtpptdemux",  "queue",
};

void warmUp() {
  started.store(true);
  ensureGstInit();
  const auto start = std::chrono::steady_clock::now();
  for (const char* factory : kFactories) {
    GstElement* e = gst_element_factory_make(factory, nullptr);
    if (e) gst_object_unref(gst_object_ref_sink(e));
  }
  const auto ms =
      std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - start).count();
  log::info("stream: WebRTC ready in ", ms, " ms (plugins loaded, DTLS certificate made)");
  warm.store(true);
}

}  // namespace

void warmUpWebrtcOnce() {
  static std::once_flag once;
  std::call_once(once, warmUp);
}

bool webrtcWarm() noexcept {
  return warm.load();
}

bool waitForStartedWarmUp() {
  if (warm.load() || !started.load()) return false;
  const auto start = std::chrono::steady_clock::now();
  warmUpWebrtcOnce();  // started: call_once returns when the running call has finished
  log::debug("stream: waited ",
             std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - start).count(),
             " ms for the WebRTC warm-up (DTLS certificate)");
  return true;
}

WebrtcWarmup::WebrtcWarmup() {
  if (webrtcWarm()) return;
  started.store(true);  // before the thread runs: a session negotiating from now on waits for it
  try {
    thread_ = std::thread(warmUpWebrtcOnce);
  } catch (const std::system_error& e) {  // no thread: the first session warms up instead
    log::debug("stream: no WebRTC warm-up thread: ", e.what());
  }
}

WebrtcWarmup::~WebrtcWarmup() {
  if (thread_.joinable()) thread_.join();
}

}  // namespace zerohop::stream
