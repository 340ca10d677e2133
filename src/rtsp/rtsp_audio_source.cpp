// RtspAudioSource (rtsp_audio_source.hpp): one GStreamer pipeline per connection, for the camera's sound.
#include "rtsp/rtsp_audio_source.hpp"

#include <gst/app/gstappsink.h>
#include <gst/gst.h>

#include <algorithm>
#include <condition_variable>
#include <cstring>
#include <deque>
#include <mutex>
#include <string>
#include <thread>
#include <variant>

#include "rtsp/gst_support.hpp"
#include "rtsp/rtsp_session.hpp"
#include "rtsp/rtsp_source.hpp"
#include "zerohop/clock.hpp"
#include "zerohop/error.hpp"
#include "zerohop/log.hpp"

namespace zerohop::rtsp {
namespace {

constexpr std::uint64_t kTcpTimeoutUs = 5'000'000;
constexpr std::size_t kQueueBlocks = 50;  // about a second of the camera's packets; drop-oldest

// One block of decoded sound as it arrived.
struct ArrivedBlock {
  std::vector<std::int16_t> samples;  // mono, 48 kHz
  std::int64_t ptsNs = -1;            // the pipeline's timestamp of its first sample (-1: none)
  std::uint64_t ntpNs = 0;            // the camera's wall clock of its first sample (0: no sender report yet)
  std::int64_t arrivalMonotonicNs = 0;
  std::int64_t arrivalRealtimeNs = 0;
};

}  // namespace

class RtspAudioSession {
 public:
  explicit RtspAudioSession(const RtspUrl& url);
  ~RtspAudioSession();
  RtspAudioSession(const RtspAudioSession&) = delete;
  RtspAudioSession& operator=(const RtspAudioSession&) = delete;

  std::variant<std::monostate, ArrivedBlock, SessionFailure> wait(std::int64_t deadlineMonotonicNs);
  std::uint64_t dropped() {
    std::lock_guard lock(mutex_);
    return dropped_;
  }

 private:
  static GstFlowReturn onNewSample(GstAppSink* sink, gpointer data);
  static GstBusSyncReply onBusMessage(GstBus*, GstMessage* message, gpointer data);
  static gboolean onSelectStream(GstElement*, guint, GstCaps* caps, gpointer data);
  static void onSourcePad(GstElement*, GstPad* pad, gpointer data);
  static void onDecodedPad(GstElement*, GstPad* pad, gpointer data);
  static GstPadProbeReturn onRtp(GstPad*, GstPadProbeInfo* info, gpointer data);
  void fail(SessionFailure f);
  SessionFailure describe(const GError* error, const gchar* debug);

  RtspUrl url_;
  GstElement* pipeline_ = nullptr;
  GstElement* decode_ = nullptr;   // borrowed from the pipeline
  GstElement* convert_ = nullptr;  // borrowed from the pipeline
  std::mutex mutex_;
  std::condition_variable ready_;
  std::deque<ArrivedBlock> blocks_;
  std::optional<SessionFailure> failure_;
  std::uint64_t dropped_ = 0;
  std::string offered_;   // every stream of the SDP: "video H264/90000, audio PCMU/8000"
  std::string selected_;  // the audio stream set up: "PCMU/8000" (empty: none yet)
  bool haveNtp_ = false;
  std::int64_t ntpMinusPtsNs_ = 0;  // the camera's wall clock (ns since 1900) minus the pipeline's time
};

RtspAudioSession::RtspAudioSession(const RtspUrl& url) : url_(url) {
  ensureGstInit();
  pipeline_ = gst_pipeline_new("zerohop-rtsp-audio");
  gst_object_ref_sink(pipeline_);
  GstBin* bin = GST_BIN(pipeline_);
  auto add = [&](const char* factory, const char* package) {
    GstElement* e = makeElement(factory, "an RTSP camera's sound", package);
    gst_bin_add(bin, e);
    return e;
  };
  try {
    GstElement* src = add("rtspsrc", "gstreamer1.0-plugins-good");
    decode_ = add("decodebin", "gstreamer1.0-plugins-base");
    convert_ = add("audioconvert", "gstreamer1.0-plugins-base");
    GstElement* resample = add("audioresample", "gstreamer1.0-plugins-base");
    GstElement* filter = add("capsfilter", "gstreamer1.0-plugins-base");
    GstElement* sink = add("appsink", "gstreamer1.0-plugins-base");
    g_object_set(src, "location", url.location().c_str(), "latency", static_cast<guint>(url.latencyMs),
                 "tcp-timeout", static_cast<guint64>(kTcpTimeoutUs), "add-reference-timestamp-meta", TRUE,
                 nullptr);
    gst_util_set_object_arg(G_OBJECT(src), "protocols", url.protocols.c_str());
    // Timestamps from the camera's RTP clock alone (no skew correction against the arrival): contiguous
    // blocks, as the camera sampled them.
    gst_util_set_object_arg(G_OBJECT(src), "buffer-mode", "none");
    if (!url.user.empty())
      g_object_set(src, "user-id", url.user.c_str(), "user-pw", url.password.c_str(), nullptr);
    g_signal_connect(src, "select-stream", G_CALLBACK(onSelectStream), this);
    g_signal_connect(src, "pad-added", G_CALLBACK(onSourcePad), this);
    g_signal_connect(decode_, "pad-added", G_CALLBACK(onDecodedPad), this);
    GstCaps* caps =
        gst_caps_from_string("audio/x-raw,format=S16LE,layout=interleaved,rate=48000,channels=1");
    g_object_set(filter, "caps", caps, nullptr);
    gst_caps_unref(caps);
    g_object_set(sink, "sync", FALSE, "max-buffers", 8u, "drop", TRUE, nullptr);
    GstAppSinkCallbacks callbacks{};
    callbacks.new_sample = onNewSample;
    gst_app_sink_set_callbacks(GST_APP_SINK(sink), &callbacks, this, nullptr);
    if (!gst_element_link_many(convert_, resample, filter, sink, nullptr))
      throw Error(Errc::kInternal,
                  "gst_element_link_many(audioconvert ! audioresample ! capsfilter ! appsink) failed");
    GstBus* bus = gst_element_get_bus(pipeline_);
    gst_bus_set_sync_handler(bus, onBusMessage, this, nullptr);
    gst_object_unref(bus);
    if (gst_element_set_state(pipeline_, GST_STATE_PLAYING) == GST_STATE_CHANGE_FAILURE)
      fail({FailureKind::kOther, "the RTSP audio pipeline did not start"});
  } catch (...) {
    gst_element_set_state(pipeline_, GST_STATE_NULL);
    gst_object_unref(pipeline_);
    throw;
  }
}

RtspAudioSession::~RtspAudioSession() {
  // Stops GStreamer's threads (no callback runs after this), then frees the pipeline.
  gst_element_set_state(pipeline_, GST_STATE_NULL);
  gst_object_unref(pipeline_);
}

void RtspAudioSession::fail(SessionFailure f) {
  {
    std::lock_guard lock(mutex_);
    if (failure_) return;
    f.message = maskCredentials(f.message);
    failure_ = std::move(f);
  }
  ready_.notify_all();
}

SessionFailure RtspAudioSession::describe(const GError* error, const gchar* debug) {
  std::string offered, selected;
  {
    std::lock_guard lock(mutex_);
    offered = offered_;
    selected = selected_;
  }
  const bool resource = error && error->domain == GST_RESOURCE_ERROR;
  if (resource && error->code == GST_RESOURCE_ERROR_NOT_AUTHORIZED)
    return {FailureKind::kUnauthorized,
            "the camera refused the credentials (401 Unauthorized): check the user and password in the URL"};
  if (resource && error->code == GST_RESOURCE_ERROR_NOT_FOUND)
    return {FailureKind::kNotFound, "the camera has no stream at " + url_.path + " (404 Not Found)"};
  if (!offered.empty() && selected.empty())
    return {FailureKind::kNoUsableStream,
            "the camera offers " + offered +
                " and no audio stream: turn its audio on (the camera's stream settings) or serve it without "
                "audio = \"rtsp\""};
  const bool noDecoder = error && ((error->domain == GST_STREAM_ERROR &&
                                    (error->code == GST_STREAM_ERROR_CODEC_NOT_FOUND ||
                                     error->code == GST_STREAM_ERROR_DECODE || error->code == GST_STREAM_ERROR_FORMAT)) ||
                                   (error->domain == GST_CORE_ERROR && error->code == GST_CORE_ERROR_MISSING_PLUGIN));
  if (noDecoder && !selected.empty())
    return {FailureKind::kNoUsableStream,
            "the camera's audio is " + selected +
                ", which no installed GStreamer decoder takes (" + (error ? error->message : "") +
                "): zerohop takes PCMU and PCMA (G.711; gstreamer1.0-plugins-good), AAC (MPEG4-GENERIC; faad in "
                "gstreamer1.0-plugins-bad or gstreamer1.0-libav), Opus and L16; set the camera's audio codec to "
                "one of them"};
  std::string words = error ? error->message : "unknown error";
  if (const std::string detail = lastLine(debug); !detail.empty()) words += " " + detail;
  if (resource)
    return {FailureKind::kUnreachable, "lost the camera's sound at " + url_.host + ":" +
                                           std::to_string(url_.port) + " (" + words + ")"};
  return {FailureKind::kOther, words};
}

GstFlowReturn RtspAudioSession::onNewSample(GstAppSink* sink, gpointer data) {
  auto* self = static_cast<RtspAudioSession*>(data);
  SamplePtr sample(gst_app_sink_pull_sample(sink));
  if (!sample) return GST_FLOW_OK;
  ArrivedBlock block;
  block.arrivalMonotonicNs = monotonicNs();
  block.arrivalRealtimeNs = realtimeNs();
  GstBuffer* buffer = gst_sample_get_buffer(sample.get());
  if (!buffer) return GST_FLOW_OK;
  GstMapInfo map;
  if (!gst_buffer_map(buffer, &map, GST_MAP_READ)) return GST_FLOW_OK;
  block.samples.resize(map.size / sizeof(std::int16_t));
  std::memcpy(block.samples.data(), map.data, block.samples.size() * sizeof(std::int16_t));
  gst_buffer_unmap(buffer, &map);
  if (block.samples.empty()) return GST_FLOW_OK;
  if (GST_BUFFER_PTS_IS_VALID(buffer)) block.ptsNs = static_cast<std::int64_t>(GST_BUFFER_PTS(buffer));
  {
    std::lock_guard lock(self->mutex_);
    if (self->haveNtp_ && block.ptsNs >= 0)
      block.ntpNs = static_cast<std::uint64_t>(block.ptsNs + self->ntpMinusPtsNs_);
    self->blocks_.push_back(std::move(block));
    if (self->blocks_.size() > kQueueBlocks) {
      self->blocks_.pop_front();  // live sound drops the oldest
      ++self->dropped_;
    }
  }
  self->ready_.notify_all();
  return GST_FLOW_OK;
}

// The camera's RTP packets, before decodebin: each that carries the camera's wall clock (rtspsrc's
// reference-timestamp meta, from its RTCP sender reports) updates the pipeline-time -> camera-time
// mapping the decoded blocks are stamped with (the decoder and resampler keep the pipeline's timestamps).
GstPadProbeReturn RtspAudioSession::onRtp(GstPad*, GstPadProbeInfo* info, gpointer data) {
  auto* self = static_cast<RtspAudioSession*>(data);
  GstBuffer* buffer = GST_PAD_PROBE_INFO_BUFFER(info);
  if (!buffer || !GST_BUFFER_PTS_IS_VALID(buffer)) return GST_PAD_PROBE_OK;
  const GstReferenceTimestampMeta* ntp = gst_buffer_get_reference_timestamp_meta(buffer, ntpCaps());
  if (!ntp) return GST_PAD_PROBE_OK;
  std::lock_guard lock(self->mutex_);
  self->ntpMinusPtsNs_ = static_cast<std::int64_t>(ntp->timestamp) - static_cast<std::int64_t>(GST_BUFFER_PTS(buffer));
  self->haveNtp_ = true;
  return GST_PAD_PROBE_OK;
}

GstBusSyncReply RtspAudioSession::onBusMessage(GstBus*, GstMessage* message, gpointer data) {
  auto* self = static_cast<RtspAudioSession*>(data);
  switch (GST_MESSAGE_TYPE(message)) {
    case GST_MESSAGE_ERROR: {
      GError* error = nullptr;
      gchar* debug = nullptr;
      gst_message_parse_error(message, &error, &debug);
      self->fail(self->describe(error, debug));
      g_clear_error(&error);
      g_free(debug);
      break;
    }
    case GST_MESSAGE_EOS:
      self->fail({FailureKind::kEnded, "the camera ended the stream"});
      break;
    default:
      break;
  }
  gst_message_unref(message);  // a sync handler that returns DROP owns the message
  return GST_BUS_DROP;
}

// rtspsrc asks, per stream of the SDP, whether to set it up: the first audio stream only.
gboolean RtspAudioSession::onSelectStream(GstElement*, guint, GstCaps* caps, gpointer data) {
  auto* self = static_cast<RtspAudioSession*>(data);
  const GstStructure* s = gst_caps_get_structure(caps, 0);
  const gchar* media = gst_structure_get_string(s, "media");
  const gchar* encoding = gst_structure_get_string(s, "encoding-name");
  gint clockRate = 0;
  gst_structure_get_int(s, "clock-rate", &clockRate);
  const std::string m = media ? media : "?", e = encoding ? encoding : "?";
  const std::string codec = e + "/" + std::to_string(clockRate);
  std::lock_guard lock(self->mutex_);
  self->offered_ += (self->offered_.empty() ? "" : ", ") + m + " " + codec;
  if (!self->selected_.empty() || m != "audio") return FALSE;
  self->selected_ = codec;
  return TRUE;
}

void RtspAudioSession::onSourcePad(GstElement*, GstPad* pad, gpointer data) {
  auto* self = static_cast<RtspAudioSession*>(data);
  GstPad* sinkPad = gst_element_get_static_pad(self->decode_, "sink");
  if (!gst_pad_is_linked(sinkPad)) {
    gst_pad_add_probe(pad, GST_PAD_PROBE_TYPE_BUFFER, onRtp, self, nullptr);
    if (gst_pad_link(pad, sinkPad) != GST_PAD_LINK_OK)
      self->fail({FailureKind::kOther, "cannot link the camera's audio stream to decodebin"});
  }
  gst_object_unref(sinkPad);
}

void RtspAudioSession::onDecodedPad(GstElement*, GstPad* pad, gpointer data) {
  auto* self = static_cast<RtspAudioSession*>(data);
  GstPad* sinkPad = gst_element_get_static_pad(self->convert_, "sink");
  if (!gst_pad_is_linked(sinkPad) && gst_pad_link(pad, sinkPad) != GST_PAD_LINK_OK)
    self->fail({FailureKind::kOther, "cannot link the camera's decoded sound to audioconvert"});
  gst_object_unref(sinkPad);
}

std::variant<std::monostate, ArrivedBlock, SessionFailure> RtspAudioSession::wait(std::int64_t deadlineMonotonicNs) {
  std::unique_lock lock(mutex_);
  const auto deadline = std::chrono::steady_clock::now() +
                        std::chrono::nanoseconds(std::max<std::int64_t>(0, deadlineMonotonicNs - monotonicNs()));
  ready_.wait_until(lock, deadline, [&] { return !blocks_.empty() || failure_; });
  if (!blocks_.empty()) {
    ArrivedBlock block = std::move(blocks_.front());
    blocks_.pop_front();
    return block;
  }
  if (failure_) return *failure_;
  return std::monostate{};
}

RtspAudioSource::RtspAudioSource(const RtspUrl& url, RtspAudioPolicy policy)
    : url_(url), name_(url.masked()), policy_(policy) {
  startSession();  // throws for a missing element, before serve starts
}

RtspAudioSource::~RtspAudioSource() = default;

audio::AudioSourceInfo RtspAudioSource::info() const { return {name_, 1, 960}; }

audio::AudioSourceCounters RtspAudioSource::counters() const {
  audio::AudioSourceCounters c;
  c.blocks = blocks_.load();
  c.overruns = dropped_.load();
  c.errors = errors_.load();
  c.reopens = reopens_.load();
  return c;
}

void RtspAudioSource::startSession() {
  session_ = std::make_unique<RtspAudioSession>(url_);
  sessionDelivered_ = false;
  arrivalAnchored_ = false;
  lastBlockNs_ = monotonicNs();
}

std::optional<audio::AudioFrame> RtspAudioSource::next(std::chrono::milliseconds timeout) {
  const std::int64_t deadline = monotonicNs() + std::chrono::nanoseconds(timeout).count();
  while (monotonicNs() < deadline) {
    if (!session_) {
      const std::int64_t now = monotonicNs();
      if (now < nextAttemptNs_) {
        // Waiting for the next attempt (the capture thread's own time: nothing else waits on it).
        std::this_thread::sleep_for(std::chrono::nanoseconds(std::min(deadline, nextAttemptNs_) - now));
        continue;
      }
      startSession();
    }
    const std::uint64_t droppedBefore = session_->dropped();
    auto got = session_->wait(std::min(deadline, lastBlockNs_ + std::chrono::nanoseconds(policy_.stallTimeout).count()));
    dropped_ += session_->dropped() - droppedBefore;
    if (auto* block = std::get_if<ArrivedBlock>(&got)) {
      lastBlockNs_ = block->arrivalMonotonicNs;
      if (!sessionDelivered_) {
        sessionDelivered_ = true;
        if (outage_) {
          ++reopens_;
          log::info("audio ", name_, ": the camera's sound is back");
        }
        outage_ = false;
        delay_ = std::chrono::milliseconds(0);
      }
      audio::AudioFrame frame;
      frame.channels = 1;
      frame.samples = std::move(block->samples);
      frame.sequence = sequence_++;
      const std::int64_t duration = frame.durationNs();
      const CaptureTime t = captureTimeOf(block->ntpNs, block->arrivalMonotonicNs, block->arrivalRealtimeNs);
      if (t.clock == CaptureClock::kCamera) {
        frame.captureNs = t.monotonicNs;  // the camera's clock at the block's RTP time
      } else if (block->ptsNs >= 0) {
        // Before the first sender report: the block's RTP time (the pipeline's timestamps follow the
        // camera's RTP clock alone, buffer-mode none: contiguous blocks) placed by the least delayed block
        // so far, so no block seems captured after it arrived, and a backlog after a stall (late arrivals)
        // leaves the placement alone. The first blocks come in a burst: the placement settles on them.
        const std::int64_t offset = block->arrivalMonotonicNs - duration - block->ptsNs;
        if (!arrivalAnchored_ || offset < arrivalOffsetNs_) arrivalOffsetNs_ = offset;
        arrivalAnchored_ = true;
        frame.captureNs = block->ptsNs + arrivalOffsetNs_;
      } else {
        frame.captureNs = block->arrivalMonotonicNs - duration;
      }
      clock_.store(t.clock);
      const auto k = static_cast<std::size_t>(t.clock);
      if (!clockLogged_[k]) {
        clockLogged_[k] = true;
        log::info("audio ", name_, ": capture time ",
                  t.clock == CaptureClock::kCamera ? "from the camera's clock (RTCP sender reports), as its video"
                  : t.clock == CaptureClock::kArrival
                      ? "from the arrival until the camera's first sender report"
                      : "from the arrival: the camera's clock is out of step with this host's");
      }
      ++blocks_;
      return frame;
    }
    SessionFailure failure;
    if (auto* f = std::get_if<SessionFailure>(&got)) {
      failure = std::move(*f);
    } else if (monotonicNs() - lastBlockNs_ >= std::chrono::nanoseconds(policy_.stallTimeout).count()) {
      failure = {FailureKind::kStalled, "no sound from the camera for " +
                                            std::to_string(policy_.stallTimeout.count()) + " ms"};
    } else {
      continue;  // the deadline: the loop ends
    }
    session_.reset();
    switch (failure.kind) {
      case FailureKind::kUnauthorized:
        throw Error(Errc::kUnavailable, failure.message);
      case FailureKind::kNotFound:
        throw Error(Errc::kNotFound, failure.message);
      case FailureKind::kNoUsableStream:
        throw Error(failure.message.find("no audio stream") != std::string::npos ? Errc::kNotFound
                                                                                  : Errc::kUnsupported,
                    failure.message);
      default:
        break;
    }
    ++errors_;
    delay_ = delay_.count() == 0 ? policy_.firstRetry : std::min(policy_.maxRetry, delay_ * 2);
    nextAttemptNs_ = monotonicNs() + std::chrono::nanoseconds(delay_).count();
    outage_ = true;
    log::warn("audio ", name_, ": ", failure.message, "; trying again in ", delay_.count(), " ms (the picture goes on)");
  }
  return std::nullopt;
}

std::unique_ptr<audio::AudioSource> openRtspAudioSource(const SourceSpec& spec) {
  if (spec.kind != "rtsp")
    throw Error(Errc::kInvalidArgument, "audio \"rtsp\" is an IP camera's own sound: its source must be rtsp://...");
  return std::make_unique<RtspAudioSource>(rtspUrlOf(spec));
}

}  // namespace zerohop::rtsp
