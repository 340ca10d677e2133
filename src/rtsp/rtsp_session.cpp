// RtspSession (rtsp_session.hpp): one GStreamer pipeline per connection to the camera, its picture and
// (when asked) its sound.
#include "rtsp/rtsp_session.hpp"

#include <gst/app/gstappsink.h>
#include <gst/sdp/gstsdpmessage.h>
#include <netdb.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <chrono>
#include <cstring>
#include <vector>

#include "rtsp/gst_support.hpp"
#include "rtsp/parameter_sets.hpp"
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

// What zerohop takes of a camera's audio: the RTP encoding name, its depayloader and decoders (any one of
// them), and the package that has them.
struct AudioCodec {
  const char* encoding;
  const char* depayloader;
  std::vector<const char*> decoders;  // empty: raw samples (L16)
  const char* package;
};

const std::vector<AudioCodec>& audioCodecs() {
  static const std::vector<AudioCodec> codecs{
      {"PCMU", "rtppcmudepay", {"mulawdec"}, "gstreamer1.0-plugins-good"},
      {"PCMA", "rtppcmadepay", {"alawdec"}, "gstreamer1.0-plugins-good"},
      {"MPEG4-GENERIC",
       "rtpmp4gdepay",
       {"faad", "avdec_aac", "fdkaacdec"},
       "gstreamer1.0-plugins-bad (faad) or gstreamer1.0-libav (avdec_aac)"},
      {"OPUS", "rtpopusdepay", {"opusdec"}, "gstreamer1.0-plugins-base"},
      {"L16", "rtpL16depay", {}, "gstreamer1.0-plugins-good"},
  };
  return codecs;
}

bool haveFactory(const char* name) {
  GstElementFactory* f = gst_element_factory_find(name);
  if (f) gst_object_unref(f);
  return f != nullptr;
}

bool isOpus(const std::string& encoding) {
  return g_ascii_strcasecmp(encoding.c_str(), "OPUS") == 0;
}

// Why zerohop cannot take a camera's audio in `encoding` (RTP encoding name), as the end of a sentence
// naming the codec (", which zerohop does not decode"); empty when it can. Opus passed on as it came
// (`passOpus`) needs its depayloader only.
std::string audioRefusal(const std::string& encoding, bool passOpus) {
  if (passOpus && isOpus(encoding) && haveFactory("rtpopusdepay")) return {};
  for (const AudioCodec& c : audioCodecs()) {
    if (g_ascii_strcasecmp(c.encoding, encoding.c_str()) != 0) continue;
    const bool decoder = c.decoders.empty() || std::any_of(c.decoders.begin(), c.decoders.end(), haveFactory);
    if (haveFactory(c.depayloader) && decoder) return {};
    return std::string(", whose decoder is not installed (install ") + c.package + ")";
  }
  return ", which zerohop does not decode";
}

const char* kAudioCodecsTaken = "PCMU or PCMA (G.711), AAC (MPEG4-GENERIC), Opus or L16";

}  // namespace

struct RtspSession::Shared {
  RtspUrl url;
  SessionStreams streams;
  std::mutex mutex;
  std::condition_variable ready;
  std::deque<ArrivedUnit> units;
  std::optional<SessionFailure> failure;
  std::uint64_t dropped = 0;
  std::string offered;
  unsigned streamsDescribed = 0;  // of the SDP's streams, those select-stream asked about
  int streamsInSdp = -1;          // the SDP's media sections (on-sdp); -1 before DESCRIBE answered
  std::optional<DescribedVideo> describedVideo;  // the stream selected, as the SDP describes it
  bool selected = false;
  VideoCodec videoCodec = VideoCodec::kH264;  // of the video stream selected
  std::string lastWarning;
  GstElement* depay = nullptr;      // borrowed from the pipeline: rtph264depay
  GstElement* depay265 = nullptr;   // borrowed from the pipeline: rtph265depay
  // The sound (streams.audio).
  std::deque<ArrivedBlock> blocks;
  std::optional<SessionFailure> audioFailure;  // the sound's own: the picture goes on
  std::uint64_t audioDropped = 0;
  std::string audioSelected;  // the audio stream set up: "PCMU/8000" (empty: none)
  std::string audioRefused;   // the first audio stream passed over, and why
  bool haveNtp = false;
  std::int64_t ntpMinusPtsNs = 0;      // the camera's wall clock (ns since 1900) minus the pipeline's time
  std::vector<GstElement*> audioPart;  // borrowed: decodebin, audioconvert, ..., the sound's appsink
                                       // (then, with streams.passOpus, rtpopusdepay and its appsink)
  GstElement* opusDepay = nullptr;     // borrowed: rtpopusdepay (streams.passOpus)

  // Notified under the mutex (here and for each unit and block): a waiter that sees the failure and
  // destroys the session can only do so after the notify is done.
  void fail(SessionFailure f) {
    std::lock_guard lock(mutex);
    if (failure) return;
    f.message = maskCredentials(f.message);
    failure = std::move(f);
    ready.notify_all();
  }

  void failAudio(SessionFailure f) {
    std::lock_guard lock(mutex);
    if (audioFailure) return;
    f.message = maskCredentials(f.message);
    audioFailure = std::move(f);
    ready.notify_all();
  }

  // The camera offers no stream of what this session asked for (called under mutex).
  std::string videoMissing() const {
    return "the camera offers " + offered +
           " and no H.264 or H.265 video, the codecs zerohop takes: set the camera's stream to H.264 (or H.265)";
  }
  std::string audioMissing() const {
    if (!audioRefused.empty())
      return "the camera's audio is " + audioRefused + "; zerohop takes " + kAudioCodecsTaken +
             ": set the camera's audio codec to one of them (its audio or stream settings)";
    return "the camera offers " + offered +
           " and no audio stream: turn its audio on (the camera's stream settings) or serve it without "
           "audio = \"rtsp\"";
  }

  bool inAudioPart(GstObject* source) const {
    for (GstElement* e : audioPart)
      if (source == GST_OBJECT(e) || gst_object_has_as_ancestor(source, GST_OBJECT(e))) return true;
    return false;
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
    {
      std::lock_guard lock(mutex);
      if (!offered.empty() && streams.video && !selected)
        return {FailureKind::kNoUsableStream, videoMissing()};
      if (!offered.empty() && !streams.video && audioSelected.empty())
        return {FailureKind::kNoUsableAudio, audioMissing()};
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

  // An error of the sound's decoding branch: the sound's failure, not the connection's.
  SessionFailure describeAudio(const GError* error, const gchar* debug) {
    std::string codec;
    {
      std::lock_guard lock(mutex);
      codec = audioSelected;
    }
    std::string words = error ? error->message : "unknown error";
    if (const std::string detail = lastLine(debug); !detail.empty()) words += " " + detail;
    return {FailureKind::kNoUsableAudio, "the camera's audio (" + codec + ") cannot be decoded (" + words +
                                             "); zerohop takes " + kAudioCodecsTaken};
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
    shared->ready.notify_all();
  }
  return GST_FLOW_OK;
}

// The camera ended the stream (or closed the connection: rtspsrc sends EOS after its warning).
void streamEnded(RtspSession::Shared* shared) {
  std::string why;
  {
    std::lock_guard lock(shared->mutex);
    why = shared->lastWarning;
  }
  shared->fail({FailureKind::kEnded, "the stream ended" + (why.empty() ? std::string{} : " (" + why + ")")});
}

// The picture's appsink saw EOS. The pipeline's own EOS never comes while the other codec's branch sits
// idle (every sink must see one), so the picture's end is the connection's.
void onVideoEos(GstAppSink*, gpointer data) { streamEnded(static_cast<RtspSession::Shared*>(data)); }

// A buffer of the sound's appsink as a block: decoded samples, or (`opus`) the camera's packet as it came.
GstFlowReturn onSoundSample(GstAppSink* sink, gpointer data, bool opus) {
  auto* shared = static_cast<RtspSession::Shared*>(data);
  SamplePtr sample(gst_app_sink_pull_sample(sink));
  if (!sample) return GST_FLOW_OK;
  ArrivedBlock block;
  block.arrivalMonotonicNs = monotonicNs();
  block.arrivalRealtimeNs = realtimeNs();
  GstBuffer* buffer = gst_sample_get_buffer(sample.get());
  if (!buffer) return GST_FLOW_OK;
  GstMapInfo map;
  if (!gst_buffer_map(buffer, &map, GST_MAP_READ)) return GST_FLOW_OK;
  if (opus) {
    block.opus.assign(map.data, map.data + map.size);
  } else {
    block.samples.resize(map.size / sizeof(std::int16_t));
    std::memcpy(block.samples.data(), map.data, block.samples.size() * sizeof(std::int16_t));
  }
  gst_buffer_unmap(buffer, &map);
  if (block.samples.empty() && block.opus.empty()) return GST_FLOW_OK;
  if (GST_BUFFER_PTS_IS_VALID(buffer)) block.ptsNs = static_cast<std::int64_t>(GST_BUFFER_PTS(buffer));
  {
    std::lock_guard lock(shared->mutex);
    if (shared->haveNtp && block.ptsNs >= 0)
      block.ntpNs = static_cast<std::uint64_t>(block.ptsNs + shared->ntpMinusPtsNs);
    shared->blocks.push_back(std::move(block));
    if (shared->blocks.size() > RtspSession::kAudioQueueBlocks) {
      shared->blocks.pop_front();  // live sound drops the oldest
      ++shared->audioDropped;
    }
    shared->ready.notify_all();
  }
  return GST_FLOW_OK;
}

GstFlowReturn onNewAudioSample(GstAppSink* sink, gpointer data) {
  return onSoundSample(sink, data, false);
}
GstFlowReturn onNewOpusSample(GstAppSink* sink, gpointer data) {
  return onSoundSample(sink, data, true);
}

// The camera's audio RTP packets, before decodebin or rtpopusdepay: each that carries the camera's wall clock
// (rtspsrc's reference-timestamp meta, from its RTCP sender reports) updates the pipeline-time -> camera-time
// mapping the decoded blocks are stamped with (the decoder and resampler keep the pipeline's timestamps).
GstPadProbeReturn onAudioRtp(GstPad*, GstPadProbeInfo* info, gpointer data) {
  auto* shared = static_cast<RtspSession::Shared*>(data);
  GstBuffer* buffer = GST_PAD_PROBE_INFO_BUFFER(info);
  if (!buffer || !GST_BUFFER_PTS_IS_VALID(buffer)) return GST_PAD_PROBE_OK;
  const GstReferenceTimestampMeta* ntp = gst_buffer_get_reference_timestamp_meta(buffer, ntpCaps());
  if (!ntp) return GST_PAD_PROBE_OK;
  std::lock_guard lock(shared->mutex);
  shared->ntpMinusPtsNs =
      static_cast<std::int64_t>(ntp->timestamp) - static_cast<std::int64_t>(GST_BUFFER_PTS(buffer));
  shared->haveNtp = true;
  return GST_PAD_PROBE_OK;
}

GstBusSyncReply onBusMessage(GstBus*, GstMessage* message, gpointer data) {
  auto* shared = static_cast<RtspSession::Shared*>(data);
  switch (GST_MESSAGE_TYPE(message)) {
    case GST_MESSAGE_ERROR: {
      GError* error = nullptr;
      gchar* debug = nullptr;
      gst_message_parse_error(message, &error, &debug);
      if (shared->inAudioPart(GST_MESSAGE_SRC(message)))
        shared->failAudio(shared->describeAudio(error, debug));
      else
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
    case GST_MESSAGE_EOS:
      streamEnded(shared);
      break;
    default:
      break;
  }
  gst_message_unref(message);  // a sync handler that returns DROP owns the message
  return GST_BUS_DROP;
}

// The selected video stream's parameter sets and rate, as rtspsrc put the SDP's fmtp and attributes in
// its caps (sprop-* verbatim; `a=framerate:30` as a-framerate).
DescribedVideo describedVideo(VideoCodec codec, const GstStructure* s) {
  DescribedVideo v;
  v.codec = codec;
  for (const char* field : codec == VideoCodec::kH264 ? std::vector<const char*>{"sprop-parameter-sets"}
                                                      : std::vector<const char*>{"sprop-vps", "sprop-sps"}) {
    if (const gchar* value = gst_structure_get_string(s, field)) {
      for (std::string& item : spropItems(value)) v.parameterSets.push_back(std::move(item));
    }
  }
  if (const gchar* rate = gst_structure_get_string(s, "a-framerate")) v.sdpFramerate = std::atof(rate);
  return v;
}

// DESCRIBE answered: how many streams select-stream will ask about.
void onSdp(GstElement*, GstSDPMessage* sdp, gpointer data) {
  auto* shared = static_cast<RtspSession::Shared*>(data);
  std::lock_guard lock(shared->mutex);
  shared->streamsInSdp = static_cast<int>(gst_sdp_message_medias_len(sdp));
  shared->ready.notify_all();
}

// rtspsrc asks, per stream of the SDP, whether to set it up: the first H.264 or H.265 video stream and the
// first audio stream in a codec zerohop takes, each only when asked for.
gboolean onSelectStream(GstElement*, guint, GstCaps* caps, gpointer data) {
  auto* shared = static_cast<RtspSession::Shared*>(data);
  const GstStructure* s = gst_caps_get_structure(caps, 0);
  const gchar* media = gst_structure_get_string(s, "media");
  const gchar* encoding = gst_structure_get_string(s, "encoding-name");
  gint clockRate = 0;
  gst_structure_get_int(s, "clock-rate", &clockRate);
  const std::string m = media ? media : "?", e = encoding ? encoding : "?";
  const std::string codec = e + "/" + std::to_string(clockRate);
  std::lock_guard lock(shared->mutex);
  shared->offered += (shared->offered.empty() ? "" : ", ") + m + " " + codec;
  ++shared->streamsDescribed;
  if (m == "video" && (e == "H264" || e == "H265") && shared->streams.video && !shared->selected) {
    shared->selected = true;
    shared->videoCodec = e == "H264" ? VideoCodec::kH264 : VideoCodec::kH265;
    shared->describedVideo = describedVideo(shared->videoCodec, s);
    shared->ready.notify_all();
    return TRUE;
  }
  shared->ready.notify_all();
  if (m == "audio" && shared->streams.audio && shared->audioSelected.empty()) {
    if (const std::string refusal = audioRefusal(e, shared->streams.passOpus); !refusal.empty()) {
      if (shared->audioRefused.empty()) shared->audioRefused = codec + refusal;
      return FALSE;
    }
    shared->audioSelected = codec;
    return TRUE;
  }
  return FALSE;
}

void onPadAdded(GstElement*, GstPad* pad, gpointer data) {
  auto* shared = static_cast<RtspSession::Shared*>(data);
  GstCaps* caps = gst_pad_get_current_caps(pad);
  if (!caps) caps = gst_pad_query_caps(pad, nullptr);
  const GstStructure* s = caps ? gst_caps_get_structure(caps, 0) : nullptr;
  const gchar* encoding = s ? gst_structure_get_string(s, "encoding-name") : nullptr;
  const gchar* media = s ? gst_structure_get_string(s, "media") : nullptr;
  const bool h264 = encoding && std::string(encoding) == "H264";
  const bool h265 = encoding && std::string(encoding) == "H265";
  const bool audio = media && std::string(media) == "audio";
  const bool opus = audio && encoding && isOpus(encoding);
  if (caps) gst_caps_unref(caps);
  if ((h264 && shared->depay) || (h265 && shared->depay265)) {
    GstPad* sinkPad = gst_element_get_static_pad(h264 ? shared->depay : shared->depay265, "sink");
    if (!gst_pad_is_linked(sinkPad) && gst_pad_link(pad, sinkPad) != GST_PAD_LINK_OK)
      shared->fail({FailureKind::kOther, h264 ? "cannot link the camera's H.264 stream to rtph264depay"
                                              : "cannot link the camera's H.265 stream to rtph265depay"});
    gst_object_unref(sinkPad);
  } else if (audio && !shared->audioPart.empty()) {
    // A camera's Opus goes on as it came (streams.passOpus); any other codec is decoded.
    GstElement* into = opus && shared->opusDepay ? shared->opusDepay : shared->audioPart.front();
    GstPad* sinkPad = gst_element_get_static_pad(into, "sink");
    if (!gst_pad_is_linked(sinkPad)) {
      gst_pad_add_probe(pad, GST_PAD_PROBE_TYPE_BUFFER, onAudioRtp, shared, nullptr);
      if (gst_pad_link(pad, sinkPad) != GST_PAD_LINK_OK)
        shared->failAudio({FailureKind::kOther, into == shared->opusDepay
                                                    ? "cannot link the camera's Opus stream to rtpopusdepay"
                                                    : "cannot link the camera's audio stream to decodebin"});
    }
    gst_object_unref(sinkPad);
  }
}

void onDecodedPad(GstElement*, GstPad* pad, gpointer data) {
  auto* shared = static_cast<RtspSession::Shared*>(data);
  GstPad* sinkPad = gst_element_get_static_pad(shared->audioPart[1], "sink");  // audioconvert
  if (!gst_pad_is_linked(sinkPad) && gst_pad_link(pad, sinkPad) != GST_PAD_LINK_OK)
    shared->failAudio({FailureKind::kOther, "cannot link the camera's decoded sound to audioconvert"});
  gst_object_unref(sinkPad);
}

// Every stream rtspsrc set up has its pad: a stream asked for and not offered is said now (a session
// that asked for the picture and the sound would otherwise play the one the camera has, silently).
void onNoMorePads(GstElement*, gpointer data) {
  auto* shared = static_cast<RtspSession::Shared*>(data);
  std::optional<SessionFailure> video, audio;
  {
    std::lock_guard lock(shared->mutex);
    if (shared->streams.video && !shared->selected)
      video = SessionFailure{FailureKind::kNoUsableStream, shared->videoMissing()};
    if (shared->streams.audio && shared->audioSelected.empty())
      audio = SessionFailure{FailureKind::kNoUsableAudio, shared->audioMissing()};
  }
  if (video) shared->fail(std::move(*video));
  if (audio) {
    if (shared->streams.video)
      shared->failAudio(std::move(*audio));
    else
      shared->fail(std::move(*audio));
  }
}

}  // namespace

RtspSession::RtspSession(const RtspUrl& url, SessionStreams streams) : shared_(std::make_shared<Shared>()) {
  ensureGstInit();
  shared_->url = url;
  shared_->streams = streams;
  pipeline_ = gst_pipeline_new("zerohop-rtsp");
  gst_object_ref_sink(pipeline_);
  GstBin* bin = GST_BIN(pipeline_);
  // Each element goes into the bin at once, so the bin frees it if a later one is missing.
  auto add = [&](const char* factory, const char* neededBy, const char* package) {
    GstElement* e = makeElement(factory, neededBy, package);
    gst_bin_add(bin, e);
    return e;
  };
  try {
    GstElement* src = add("rtspsrc", "an RTSP camera", "gstreamer1.0-plugins-good");
    g_object_set(src, "location", url.location().c_str(), "latency", static_cast<guint>(url.latencyMs),
                 "tcp-timeout", static_cast<guint64>(kTcpTimeoutUs), "add-reference-timestamp-meta", TRUE,
                 nullptr);
    gst_util_set_object_arg(G_OBJECT(src), "protocols", url.protocols.c_str());
    if (!url.user.empty())
      g_object_set(src, "user-id", url.user.c_str(), "user-pw", url.password.c_str(), nullptr);
    g_signal_connect(src, "on-sdp", G_CALLBACK(onSdp), shared_.get());
    g_signal_connect(src, "select-stream", G_CALLBACK(onSelectStream), shared_.get());
    g_signal_connect(src, "pad-added", G_CALLBACK(onPadAdded), shared_.get());
    g_signal_connect(src, "no-more-pads", G_CALLBACK(onNoMorePads), shared_.get());
    if (streams.video) {
      // One branch per codec zerohop takes; the camera's stream is linked to its own (onPadAdded), the other
      // stays idle.
      const char* neededBy = "an RTSP camera";
      struct Branch {
        const char* depay;
        const char* parse;
        const char* caps;
        GstElement** into;
      };
      for (const Branch& b : {Branch{"rtph264depay", "h264parse", "video/x-h264", &shared_->depay},
                              Branch{"rtph265depay", "h265parse", "video/x-h265", &shared_->depay265}}) {
        GstElement* depay = add(b.depay, neededBy, "gstreamer1.0-plugins-good");
        GstElement* parse = add(b.parse, neededBy, "gstreamer1.0-plugins-bad");
        GstElement* filter = add("capsfilter", neededBy, "gstreamer1.0-plugins-base");
        GstElement* sink = add("appsink", neededBy, "gstreamer1.0-plugins-base");
        *b.into = depay;
        g_object_set(parse, "config-interval", -1, nullptr);  // parameter sets before every IDR
        GstCaps* caps = gst_caps_from_string((std::string(b.caps) + ",stream-format=byte-stream,alignment=au").c_str());
        g_object_set(filter, "caps", caps, nullptr);
        gst_caps_unref(caps);
        // Neither sink holds the pipeline out of PLAYING while it has no data yet (or never: the other codec's
        // branch, a sound branch whose codec was refused), which would stall rtspsrc's jitterbuffers.
        g_object_set(sink, "sync", FALSE, "async", FALSE, "max-buffers", 2u, "drop", TRUE, nullptr);
        GstAppSinkCallbacks callbacks{};
        callbacks.new_sample = onNewSample;
        callbacks.eos = onVideoEos;
        gst_app_sink_set_callbacks(GST_APP_SINK(sink), &callbacks, shared_.get(), nullptr);
        if (!gst_element_link_many(depay, parse, filter, sink, nullptr))
          throw Error(Errc::kInternal, std::string("gst_element_link_many(") + b.depay + " ! " + b.parse +
                                           " ! capsfilter ! appsink) failed");
      }
    }
    if (streams.audio) {
      const char* neededBy = "an RTSP camera's sound";
      GstElement* decode = add("decodebin", neededBy, "gstreamer1.0-plugins-base");
      GstElement* convert = add("audioconvert", neededBy, "gstreamer1.0-plugins-base");
      GstElement* resample = add("audioresample", neededBy, "gstreamer1.0-plugins-base");
      GstElement* filter = add("capsfilter", neededBy, "gstreamer1.0-plugins-base");
      GstElement* sink = add("appsink", neededBy, "gstreamer1.0-plugins-base");
      shared_->audioPart = {decode, convert, resample, filter, sink};
      // Timestamps from the camera's RTP clock alone (no skew correction against the arrival): contiguous
      // blocks, as the camera sampled them. (The picture's capture times come from its sender reports or
      // its arrival, not from these timestamps.)
      gst_util_set_object_arg(G_OBJECT(src), "buffer-mode", "none");
      g_signal_connect(decode, "pad-added", G_CALLBACK(onDecodedPad), shared_.get());
      GstCaps* caps =
          gst_caps_from_string("audio/x-raw,format=S16LE,layout=interleaved,rate=48000,channels=1");
      g_object_set(filter, "caps", caps, nullptr);
      gst_caps_unref(caps);
      g_object_set(sink, "sync", FALSE, "async", FALSE, "max-buffers", 8u, "drop", TRUE, nullptr);
      GstAppSinkCallbacks callbacks{};
      callbacks.new_sample = onNewAudioSample;
      gst_app_sink_set_callbacks(GST_APP_SINK(sink), &callbacks, shared_.get(), nullptr);
      if (!gst_element_link_many(convert, resample, filter, sink, nullptr))
        throw Error(Errc::kInternal,
                    "gst_element_link_many(audioconvert ! audioresample ! capsfilter ! appsink) failed");
      if (streams.passOpus && haveFactory("rtpopusdepay")) {
        // A camera's Opus, one packet a buffer, as it came (idle for any other codec).
        GstElement* depay = add("rtpopusdepay", neededBy, "gstreamer1.0-plugins-good");
        GstElement* opusSink = add("appsink", neededBy, "gstreamer1.0-plugins-base");
        g_object_set(opusSink, "sync", FALSE, "async", FALSE, "max-buffers", 8u, "drop", TRUE, nullptr);
        GstAppSinkCallbacks opusCallbacks{};
        opusCallbacks.new_sample = onNewOpusSample;
        gst_app_sink_set_callbacks(GST_APP_SINK(opusSink), &opusCallbacks, shared_.get(), nullptr);
        if (!gst_element_link(depay, opusSink))
          throw Error(Errc::kInternal, "gst_element_link(rtpopusdepay ! appsink) failed");
        shared_->opusDepay = depay;
        shared_->audioPart.push_back(depay);
        shared_->audioPart.push_back(opusSink);
      }
    }
    GstBus* bus = gst_element_get_bus(pipeline_);
    gst_bus_set_sync_handler(bus, onBusMessage, shared_.get(), nullptr);
    gst_object_unref(bus);
    // PAUSED: rtspsrc connects, DESCRIBEs and SETs UP, and sends PLAY only on the way to PLAYING.
    if (gst_element_set_state(pipeline_, streams.play ? GST_STATE_PLAYING : GST_STATE_PAUSED) ==
        GST_STATE_CHANGE_FAILURE) {
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
  stop({FailureKind::kEnded, "the connection was closed"});
  gst_object_unref(pipeline_);
}

void RtspSession::stop(const SessionFailure& why) {
  // Stops GStreamer's threads (no callback runs after this); then the waits see `why`.
  std::call_once(stopped_, [&] {
    gst_element_set_state(pipeline_, GST_STATE_NULL);
    shared_->fail(why);
  });
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

std::variant<std::monostate, DescribedVideo, SessionFailure> RtspSession::waitDescribed(
    std::int64_t deadlineMonotonicNs) {
  std::unique_lock lock(shared_->mutex);
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::nanoseconds(std::max<std::int64_t>(
                                                               0, deadlineMonotonicNs - monotonicNs()));
  const auto allSeen = [&] {
    return shared_->streamsInSdp >= 0 && shared_->streamsDescribed >= static_cast<unsigned>(shared_->streamsInSdp);
  };
  shared_->ready.wait_until(lock, deadline, [&] { return allSeen() || shared_->failure; });
  if (allSeen()) {
    if (shared_->describedVideo) return *shared_->describedVideo;
    return SessionFailure{FailureKind::kNoUsableStream, maskCredentials(shared_->videoMissing())};
  }
  if (shared_->failure) return *shared_->failure;
  return std::monostate{};
}

std::string RtspSession::offered() const {
  std::lock_guard lock(shared_->mutex);
  return shared_->offered;
}

VideoCodec RtspSession::videoCodec() const {
  std::lock_guard lock(shared_->mutex);
  return shared_->videoCodec;
}

const char* videoCodecName(VideoCodec codec) noexcept { return codec == VideoCodec::kH264 ? "H.264" : "H.265"; }

std::variant<std::monostate, ArrivedBlock, SessionFailure> RtspSession::waitAudio(
    std::int64_t deadlineMonotonicNs) {
  std::unique_lock lock(shared_->mutex);
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::nanoseconds(std::max<std::int64_t>(
                                                               0, deadlineMonotonicNs - monotonicNs()));
  shared_->ready.wait_until(
      lock, deadline, [&] { return !shared_->blocks.empty() || shared_->failure || shared_->audioFailure; });
  if (!shared_->blocks.empty()) {
    ArrivedBlock block = std::move(shared_->blocks.front());
    shared_->blocks.pop_front();
    return block;
  }
  if (shared_->failure) return *shared_->failure;
  if (shared_->audioFailure) return *shared_->audioFailure;
  return std::monostate{};
}

std::uint64_t RtspSession::audioDropped() const {
  std::lock_guard lock(shared_->mutex);
  return shared_->audioDropped;
}

}  // namespace zerohop::rtsp
