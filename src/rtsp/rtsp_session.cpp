// RtspSession (rtsp_session.hpp): one GStreamer pipeline per connection to the camera.
#include "rtsp/rtsp_session.hpp"

#include <gst/app/gstappsink.h>
#include <netdb.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>

#include "rtsp/gst_support.hpp"
#include "zerohop/clock.hpp"
#include "zerohop/error.hpp"
#include "zerohop/log.hpp"

namespace zerohop::rtsp {
namespace {

constexpr std::uint64_t kTcpTimeoutUs = 5'000'000;  // connecting, and each RTSP request's answer
constexpr int kProbeConnectMs = 1000;               // our own connect, for the reason rtspsrc does not give

// Why a TCP connection to host:port fails, in the system's words ("Connection refused", "No route to
// host"), from one connect of our own bounded by `timeoutMs`: rtspsrc's own error says only "Failed to
// connect. (Generic error)". Empty when the connection succeeds (the failure was past connecting) or the
// host name does not resolve (then the resolver's words).
std::string connectFailure(std::string host, std::uint16_t port, int timeoutMs) {
  if (host.size() > 2 && host.front() == '[') host = host.substr(1, host.size() - 2);
  addrinfo hints{};
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* found = nullptr;
  if (const int rc = ::getaddrinfo(host.c_str(), std::to_string(port).c_str(), &hints, &found); rc != 0)
    return std::string("cannot resolve ") + host + ": " + ::gai_strerror(rc);
  std::string why;
  for (addrinfo* a = found; a && why.empty(); a = a->ai_next) {
    const int fd = ::socket(a->ai_family, a->ai_socktype | SOCK_NONBLOCK | SOCK_CLOEXEC, a->ai_protocol);
    if (fd < 0) continue;
    int err = 0;
    if (::connect(fd, a->ai_addr, a->ai_addrlen) != 0) {
      err = errno;
      if (err == EINPROGRESS) {
        pollfd p{fd, POLLOUT, 0};
        if (::poll(&p, 1, timeoutMs) == 1) {
          socklen_t len = sizeof err;
          ::getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &len);
        } else {
          err = ETIMEDOUT;
        }
      }
    }
    ::close(fd);
    if (err == 0) break;  // it connects: the failure came after connecting
    why = err == ETIMEDOUT ? "no answer within " + std::to_string(timeoutMs) + " ms" : std::strerror(err);
  }
  ::freeaddrinfo(found);
  return why;
}

}  // namespace

struct RtspSession::Shared {
  RtspUrl url;
  std::mutex mutex;
  std::condition_variable ready;
  std::deque<ArrivedUnit> units;
  std::optional<SessionFailure> failure;
  std::uint64_t dropped = 0;
  std::string offered;
  bool selected = false;
  std::string lastWarning;
  GstElement* depay = nullptr;  // borrowed from the pipeline

  void fail(SessionFailure f) {
    {
      std::lock_guard lock(mutex);
      if (failure) return;
      f.message = maskCredentials(f.message);
      failure = std::move(f);
    }
    ready.notify_all();
  }

  SessionFailure describe(const GError* error, const gchar* debug) {
    const std::string detail = lastLine(debug);
    const std::string where = url.host + ":" + std::to_string(url.port);
    const bool resource = error && error->domain == GST_RESOURCE_ERROR;
    if (resource && error->code == GST_RESOURCE_ERROR_NOT_AUTHORIZED) {
      return {FailureKind::kUnauthorized,
              url.user.empty()
                  ? "the camera asks for credentials (401 Unauthorized): give them in the URL, "
                    "rtsp://USER:PASSWORD@" +
                        where + url.path
                  : "the camera refused the user and password (401 Unauthorized): check them in the URL "
                    "(percent-encode '@', ':', '/' and '?' in them, e.g. %40 for '@')"};
    }
    if (resource && error->code == GST_RESOURCE_ERROR_NOT_FOUND) {
      return {FailureKind::kNotFound,
              "the camera has no stream at " + url.path +
                  " (404 Not Found): check the path (the camera's manual or web page names it)"};
    }
    std::string offeredNow;
    bool selectedNow = false;
    {
      std::lock_guard lock(mutex);
      offeredNow = offered;
      selectedNow = selected;
    }
    if (!offeredNow.empty() && !selectedNow) {
      return {
          FailureKind::kNoUsableStream,
          "the camera offers " + offeredNow +
              " and no H.264 video; zerohop passes H.264 through and does not decode other codecs yet (H.265 "
              "and the others are a later slice): set the camera's stream to H.264"};
    }
    const std::string words =
        std::string(error ? error->message : "unknown error") + (detail.empty() ? "" : " " + detail);
    if (resource &&
        (error->code == GST_RESOURCE_ERROR_OPEN_READ_WRITE || error->code == GST_RESOURCE_ERROR_OPEN_READ ||
         error->code == GST_RESOURCE_ERROR_READ || error->code == GST_RESOURCE_ERROR_WRITE)) {
      // Connecting failed: the system's reason, from a connect of our own (on GStreamer's thread, bounded).
      std::string reason;
      if (error->code == GST_RESOURCE_ERROR_OPEN_READ_WRITE)
        reason = connectFailure(url.host, url.port, kProbeConnectMs);
      return {FailureKind::kUnreachable, "cannot reach the camera at " + where + " (" +
                                             (reason.empty() ? words : reason) +
                                             "): check that it is on, the address and port, and the network"};
    }
    return {FailureKind::kOther, words};
  }
};

namespace {

GstFlowReturn onNewSample(GstAppSink* sink, gpointer data) {
  auto* shared = static_cast<RtspSession::Shared*>(data);
  ArrivedUnit unit;
  unit.sample.reset(gst_app_sink_pull_sample(sink));
  unit.arrivalMonotonicNs = monotonicNs();
  unit.arrivalRealtimeNs = realtimeNs();
  if (!unit.sample) return GST_FLOW_OK;
  {
    std::lock_guard lock(shared->mutex);
    shared->units.push_back(std::move(unit));
    if (shared->units.size() > RtspSession::kQueueDepth) {
      shared->units.pop_front();  // live video drops the oldest
      ++shared->dropped;
    }
  }
  shared->ready.notify_all();
  return GST_FLOW_OK;
}

GstBusSyncReply onBusMessage(GstBus*, GstMessage* message, gpointer data) {
  auto* shared = static_cast<RtspSession::Shared*>(data);
  switch (GST_MESSAGE_TYPE(message)) {
    case GST_MESSAGE_ERROR: {
      GError* error = nullptr;
      gchar* debug = nullptr;
      gst_message_parse_error(message, &error, &debug);
      shared->fail(shared->describe(error, debug));
      g_clear_error(&error);
      g_free(debug);
      break;
    }
    case GST_MESSAGE_WARNING: {
      GError* error = nullptr;
      gchar* debug = nullptr;
      gst_message_parse_warning(message, &error, &debug);
      std::string words = std::string(error ? error->message : "") + " " + lastLine(debug);
      words = maskCredentials(words);
      log::debug("rtsp ", shared->url.masked(), ": GStreamer warning: ", words);
      {
        std::lock_guard lock(shared->mutex);
        shared->lastWarning = std::move(words);
      }
      g_clear_error(&error);
      g_free(debug);
      break;
    }
    case GST_MESSAGE_EOS: {
      std::string why;
      {
        std::lock_guard lock(shared->mutex);
        why = shared->lastWarning;
      }
      shared->fail(
          {FailureKind::kEnded, "the stream ended" + (why.empty() ? std::string{} : " (" + why + ")")});
      break;
    }
    default:
      break;
  }
  gst_message_unref(message);  // a sync handler that returns DROP owns the message
  return GST_BUS_DROP;
}

// rtspsrc asks, per stream of the SDP, whether to set it up: the first H.264 video stream only.
gboolean onSelectStream(GstElement*, guint, GstCaps* caps, gpointer data) {
  auto* shared = static_cast<RtspSession::Shared*>(data);
  const GstStructure* s = gst_caps_get_structure(caps, 0);
  const gchar* media = gst_structure_get_string(s, "media");
  const gchar* encoding = gst_structure_get_string(s, "encoding-name");
  gint clockRate = 0;
  gst_structure_get_int(s, "clock-rate", &clockRate);
  const std::string m = media ? media : "?", e = encoding ? encoding : "?";
  std::lock_guard lock(shared->mutex);
  shared->offered += (shared->offered.empty() ? "" : ", ") + m + " " + e + "/" + std::to_string(clockRate);
  if (shared->selected || m != "video" || e != "H264") return FALSE;
  shared->selected = true;
  return TRUE;
}

void onPadAdded(GstElement*, GstPad* pad, gpointer data) {
  auto* shared = static_cast<RtspSession::Shared*>(data);
  GstCaps* caps = gst_pad_get_current_caps(pad);
  if (!caps) caps = gst_pad_query_caps(pad, nullptr);
  const GstStructure* s = caps ? gst_caps_get_structure(caps, 0) : nullptr;
  const gchar* encoding = s ? gst_structure_get_string(s, "encoding-name") : nullptr;
  const bool h264 = encoding && std::string(encoding) == "H264";
  if (caps) gst_caps_unref(caps);
  if (!h264) return;
  GstPad* sinkPad = gst_element_get_static_pad(shared->depay, "sink");
  if (!gst_pad_is_linked(sinkPad) && gst_pad_link(pad, sinkPad) != GST_PAD_LINK_OK) {
    shared->fail({FailureKind::kOther, "cannot link the camera's H.264 stream to rtph264depay"});
  }
  gst_object_unref(sinkPad);
}

}  // namespace

RtspSession::RtspSession(const RtspUrl& url) : shared_(std::make_shared<Shared>()) {
  ensureGstInit();
  shared_->url = url;
  pipeline_ = gst_pipeline_new("zerohop-rtsp");
  gst_object_ref_sink(pipeline_);
  GstBin* bin = GST_BIN(pipeline_);
  // Each element goes into the bin at once, so the bin frees it if a later one is missing.
  auto add = [&](const char* factory, const char* package) {
    GstElement* e = makeElement(factory, "an RTSP camera", package);
    gst_bin_add(bin, e);
    return e;
  };
  try {
    GstElement* src = add("rtspsrc", "gstreamer1.0-plugins-good");
    GstElement* depay = add("rtph264depay", "gstreamer1.0-plugins-good");
    GstElement* parse = add("h264parse", "gstreamer1.0-plugins-bad");
    GstElement* filter = add("capsfilter", "gstreamer1.0-plugins-base");
    GstElement* sink = add("appsink", "gstreamer1.0-plugins-base");
    shared_->depay = depay;
    g_object_set(src, "location", url.location().c_str(), "latency", static_cast<guint>(url.latencyMs),
                 "tcp-timeout", static_cast<guint64>(kTcpTimeoutUs), "add-reference-timestamp-meta", TRUE,
                 nullptr);
    gst_util_set_object_arg(G_OBJECT(src), "protocols", url.protocols.c_str());
    if (!url.user.empty())
      g_object_set(src, "user-id", url.user.c_str(), "user-pw", url.password.c_str(), nullptr);
    g_signal_connect(src, "select-stream", G_CALLBACK(onSelectStream), shared_.get());
    g_signal_connect(src, "pad-added", G_CALLBACK(onPadAdded), shared_.get());
    g_object_set(parse, "config-interval", -1, nullptr);  // SPS/PPS before every IDR
    GstCaps* caps = gst_caps_from_string("video/x-h264,stream-format=byte-stream,alignment=au");
    g_object_set(filter, "caps", caps, nullptr);
    gst_caps_unref(caps);
    g_object_set(sink, "sync", FALSE, "max-buffers", 2u, "drop", TRUE, nullptr);
    GstAppSinkCallbacks callbacks{};
    callbacks.new_sample = onNewSample;
    gst_app_sink_set_callbacks(GST_APP_SINK(sink), &callbacks, shared_.get(), nullptr);
    if (!gst_element_link_many(depay, parse, filter, sink, nullptr))
      throw Error(Errc::kInternal,
                  "gst_element_link_many(rtph264depay ! h264parse ! capsfilter ! appsink) failed");
    GstBus* bus = gst_element_get_bus(pipeline_);
    gst_bus_set_sync_handler(bus, onBusMessage, shared_.get(), nullptr);
    gst_object_unref(bus);
    if (gst_element_set_state(pipeline_, GST_STATE_PLAYING) == GST_STATE_CHANGE_FAILURE) {
      // The failure's words are on the bus (already in shared_->failure); wait() reports them.
      shared_->fail({FailureKind::kOther, "the RTSP pipeline did not start"});
    }
  } catch (...) {
    gst_element_set_state(pipeline_, GST_STATE_NULL);
    gst_object_unref(pipeline_);
    throw;
  }
}

RtspSession::~RtspSession() {
  // Stops GStreamer's threads (no callback runs after this), then frees the pipeline.
  gst_element_set_state(pipeline_, GST_STATE_NULL);
  gst_object_unref(pipeline_);
}

std::variant<std::monostate, ArrivedUnit, SessionFailure> RtspSession::wait(
    std::int64_t deadlineMonotonicNs) {
  std::unique_lock lock(shared_->mutex);
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::nanoseconds(std::max<std::int64_t>(
                                                               0, deadlineMonotonicNs - monotonicNs()));
  shared_->ready.wait_until(lock, deadline, [&] { return !shared_->units.empty() || shared_->failure; });
  if (!shared_->units.empty()) {
    ArrivedUnit unit = std::move(shared_->units.front());
    shared_->units.pop_front();
    return unit;
  }
  if (shared_->failure) return *shared_->failure;
  return std::monostate{};
}

std::uint64_t RtspSession::dropped() const {
  std::lock_guard lock(shared_->mutex);
  return shared_->dropped;
}

std::string RtspSession::offered() const {
  std::lock_guard lock(shared_->mutex);
  return shared_->offered;
}

}  // namespace zerohop::rtsp
