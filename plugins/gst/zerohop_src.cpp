#include "zerohop_src.hpp"

#include <gst/video/video.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <chrono>
#include <memory>
#include <mutex>
#include <optional>
#include <string>

#include "caps.hpp"
#include "core/opus_toc.hpp"
#include "cuda_frames.hpp"
#include "zerohop/clock.hpp"
#include "zerohop/error.hpp"
#include "zerohop/share.hpp"

GST_DEBUG_CATEGORY_STATIC(zerohop_src_debug);
#define GST_CAT_DEFAULT zerohop_src_debug

namespace {

using namespace std::chrono_literals;

enum class PublisherGone { kError = 0, kEos = 1, kWait = 2 };

GType publisherGoneType() {
  static GType type = 0;
  static const GEnumValue values[] = {
      {static_cast<gint>(PublisherGone::kError), "Post an error and stop", "error"},
      {static_cast<gint>(PublisherGone::kEos), "Send EOS downstream", "eos"},
      {static_cast<gint>(PublisherGone::kWait),
       "Keep the pipeline running and reattach when the publisher returns", "wait"},
      {0, nullptr, nullptr}};
  if (g_once_init_enter(&type))
    g_once_init_leave(&type, g_enum_register_static("ZerohopSrcPublisherGone", values));
  return type;
}

enum {
  PROP_0,
  PROP_SHARE,
  PROP_OPEN_TIMEOUT,
  PROP_ON_PUBLISHER_GONE,
  PROP_RECONNECT_INTERVAL,
  PROP_LATENCY,
  PROP_FRAMES,
  PROP_DROPS,
  PROP_OVERRUNS,
  PROP_COPIES,
  PROP_RECONNECTS,
  PROP_BYTES_COPIED,
};

constexpr gint64 kLatencyMeasured = -1;
constexpr std::size_t kLatencyWindow = 32;

// What the element owns besides the GObject fields; created in init, destroyed in finalize.
struct SrcState {
  std::mutex lock;  // guards the settings below (set from the application thread)
  std::string share;
  guint openTimeoutMs = 0;  // start() waits this long for the share to be served
  PublisherGone onGone = PublisherGone::kError;
  guint reconnectIntervalMs = 500;
  gint64 latencyNs = kLatencyMeasured;

  // Streaming thread only (start/stop/create run on it or with it stopped).
  std::unique_ptr<zerohop::Subscriber> sub;
  GstVideoInfo info{};
  bool encoded = false;
  bool opus = false;     // a sound share: audio/x-opus
  int opusChannels = 0;  // what the caps say, from the first packet's TOC (0: not yet known)
  bool videoMetaOk = true;
  std::array<std::int64_t, kLatencyWindow> lateness{};  // capture -> push of the last frames, ns
  std::size_t latenessCount = 0;
  bool latencyPosted = false;
  std::int64_t lastCaptureNs = 0;
  std::atomic<std::int64_t> periodNs{0};  // smoothed capture interval

  std::array<gsize, zerohop::kMaxPlanes> planeRows{};
  // Device shares: frames go out as GstCudaMemory, copied by `cuda` (opened at the first frame,
  // which names the CUDA device).
  bool device = false;
  zerohop::ImageLayout layout{};
  std::unique_ptr<zerohop::gst::DeviceFrameCopier> cuda;

  // Read from any thread under the object lock: what get_caps and the latency query answer.
  GstCaps* caps = nullptr;
  std::uint32_t slots = 0;
  GstObject* cudaContext = nullptr;  // the copier's GstCudaContext (process lifetime), for context queries

  std::atomic<bool> flushing{false};
  std::atomic<std::int64_t> measuredLatencyNs{0};
  std::atomic<std::uint64_t> frames{0}, drops{0}, overruns{0}, copies{0}, reconnects{0}, bytesCopied{0};
};

}  // namespace

struct _ZerohopSrc {
  GstPushSrc parent;
  SrcState* state;
};

G_DEFINE_TYPE(ZerohopSrc, zerohop_src, GST_TYPE_PUSH_SRC)

namespace {

SrcState& stateOf(gpointer self) {
  return *ZEROHOP_SRC(self)->state;
}

// Reads the ring's geometry into the state and builds the caps; posts an element error and
// returns nullptr when the share is one this slice cannot read.
GstCaps* capsFromSubscriber(ZerohopSrc* self) {
  auto& s = *self->state;
  const auto& info = s.sub->info();
  const bool device = info.memory == zerohop::MemoryKind::kDevice;
  if (device && *zerohop::gst::cudaTemplateCaps() == '\0') {
    GST_ELEMENT_ERROR(self, RESOURCE, SETTINGS, ("share '%s' holds device (CUDA) memory", info.name.c_str()),
                      ("this gstzerohop was built without CUDA memory support: rebuild with the CUDA toolkit and "
                       "gstreamer-cuda-1.0 (Debian 12: libgstreamer-plugins-bad1.0-dev) found"));
    return nullptr;
  }
  if (device && !zerohop::gst::cudaMemoryCanHold(info.layout.format)) {
    GST_ELEMENT_ERROR(self, STREAM, FORMAT,
                      ("share '%s' publishes %s device frames, which GStreamer's CUDA memory cannot hold",
                       info.name.c_str(), std::string(zerohop::formatName(info.layout.format)).c_str()),
                      ("GstCudaMemory (GStreamer 1.22) knows NV12, I420, RGBA, BGRx and RGB"));
    return nullptr;
  }
  GstCaps* caps = zerohop::gst::capsForShare(info.layout, info.encoded);
  if (caps && device) {
    caps = gst_caps_make_writable(caps);
    gst_caps_set_features(caps, 0, gst_caps_features_new("memory:CUDAMemory", nullptr));
  }
  if (!caps) {
    GST_ELEMENT_ERROR(self, STREAM, FORMAT,
                      ("share '%s' publishes %s, which zerohopsrc cannot express as caps", info.name.c_str(),
                       std::string(zerohop::formatName(info.layout.format)).c_str()),
                      (nullptr));
    return nullptr;
  }
  s.encoded = info.encoded || zerohop::isCompressed(info.layout.format);
  s.opus = info.layout.format == zerohop::PixelFormat::kOpus;
  s.opusChannels = 0;
  gst_video_info_init(&s.info);
  if (!s.encoded) gst_video_info_from_caps(&s.info, caps);
  for (std::size_t p = 0; p < zerohop::kMaxPlanes; ++p) s.planeRows[p] = info.layout.planes[p].rows;
  s.device = device;
  if (device && (s.layout.format != info.layout.format || s.layout.width != info.layout.width ||
                 s.layout.height != info.layout.height)) {
    s.cuda.reset();  // a new geometry after a reattach: a new pool at the next frame
  }
  s.layout = info.layout;
  GST_OBJECT_LOCK(self);
  gst_caps_replace(&s.caps, caps);
  s.slots = info.slots;
  GST_OBJECT_UNLOCK(self);
  return caps;
}

bool connect(ZerohopSrc* self, bool postErrors) {
  auto& s = *self->state;
  std::string share;
  zerohop::SubscribeOptions options;
  {
    std::lock_guard g(s.lock);
    share = s.share;
    options.waitForPublisher = std::chrono::milliseconds(s.openTimeoutMs);
  }
  try {
    if (s.sub) {
      s.sub->reconnect();
    } else {
      s.sub = std::make_unique<zerohop::Subscriber>(share, std::move(options));
    }
    return true;
  } catch (const zerohop::Error& e) {
    if (postErrors) {
      GST_ELEMENT_ERROR(self, RESOURCE, OPEN_READ, ("cannot subscribe to share '%s'", share.c_str()),
                        ("%s: %s", zerohop::errcName(e.code()), e.what()));
    } else {
      GST_DEBUG_OBJECT(self, "reattach to '%s' failed: %s", share.c_str(), e.what());
    }
    return false;
  }
}

gboolean srcStart(GstBaseSrc* base) {
  auto* self = ZEROHOP_SRC(base);
  auto& s = *self->state;
  {
    std::lock_guard g(s.lock);
    if (s.share.empty()) {
      GST_ELEMENT_ERROR(self, RESOURCE, NOT_FOUND, ("no share name"), ("set the 'share' property"));
      return FALSE;
    }
  }
  s.sub.reset();
  s.latenessCount = 0;
  s.latencyPosted = false;
  s.lastCaptureNs = 0;
  s.periodNs = 0;
  s.frames = s.drops = s.overruns = s.copies = s.reconnects = s.bytesCopied = 0;
  if (!connect(self, true)) return FALSE;
  GstCaps* caps = capsFromSubscriber(self);
  if (!caps) return FALSE;
  gst_caps_unref(caps);
  return TRUE;
}

gboolean srcStop(GstBaseSrc* base) {
  auto& s = stateOf(base);
  s.sub.reset();  // frames still in buffers keep their mappings; leases end with them
  s.cuda.reset();  // CUDA buffers still downstream are freed when they come back
  GST_OBJECT_LOCK(base);
  gst_caps_replace(&s.caps, nullptr);
  s.slots = 0;
  s.cudaContext = nullptr;
  GST_OBJECT_UNLOCK(base);
  return TRUE;
}

GstCaps* srcGetCaps(GstBaseSrc* base, GstCaps* filter) {
  auto& s = stateOf(base);
  // get_caps may run on any thread: answer what start() or the last reattach found.
  GST_OBJECT_LOCK(base);
  GstCaps* caps = s.caps ? gst_caps_ref(s.caps) : nullptr;
  GST_OBJECT_UNLOCK(base);
  if (!caps) caps = gst_pad_get_pad_template_caps(GST_BASE_SRC_PAD(base));
  if (filter) {
    GstCaps* both = gst_caps_intersect_full(filter, caps, GST_CAPS_INTERSECT_FIRST);
    gst_caps_unref(caps);
    caps = both;
  }
  return caps;
}

gboolean srcDecideAllocation(GstBaseSrc* base, GstQuery* query) {
  auto& s = stateOf(base);
  s.videoMetaOk = gst_query_find_allocation_meta(query, GST_VIDEO_META_API_TYPE, nullptr);
  return GST_BASE_SRC_CLASS(zerohop_src_parent_class)->decide_allocation(base, query);
}

gboolean srcUnlock(GstBaseSrc* base) {
  stateOf(base).flushing = true;
  return TRUE;
}

gboolean srcUnlockStop(GstBaseSrc* base) {
  stateOf(base).flushing = false;
  return TRUE;
}

void publishCounters(SrcState& s) {
  if (!s.sub) return;
  const auto st = s.sub->stats();
  s.drops = st.missed;  // the Subscriber's counters run on across reconnect()
  s.overruns = st.overruns;
}

gboolean srcQuery(GstBaseSrc* base, GstQuery* query) {
  if (GST_QUERY_TYPE(query) == GST_QUERY_CONTEXT) {
    // Downstream CUDA elements asking for a context get the one our CUDA buffers live in.
    GST_OBJECT_LOCK(base);
    GstObject* context = stateOf(base).cudaContext;
    GST_OBJECT_UNLOCK(base);
    if (zerohop::gst::answerCudaContextQuery(GST_ELEMENT(base), query, context)) return TRUE;
  }
  if (GST_QUERY_TYPE(query) != GST_QUERY_LATENCY) {
    return GST_BASE_SRC_CLASS(zerohop_src_parent_class)->query(base, query);
  }
  auto& s = stateOf(base);
  gint64 fixed;
  {
    std::lock_guard g(s.lock);
    fixed = s.latencyNs;
  }
  const GstClockTime min =
      fixed >= 0 ? static_cast<GstClockTime>(fixed) : static_cast<GstClockTime>(s.measuredLatencyNs.load());
  // A late reader still finds the frames the ring holds: up to `slots` frame periods more.
  GstClockTime max = min;
  GST_OBJECT_LOCK(base);
  const std::uint32_t slots = s.slots;
  GST_OBJECT_UNLOCK(base);
  if (s.periodNs > 0 && slots > 1) max = min + static_cast<GstClockTime>(s.periodNs.load()) * (slots - 1);
  GST_DEBUG_OBJECT(base, "latency: live, min %" GST_TIME_FORMAT " max %" GST_TIME_FORMAT, GST_TIME_ARGS(min),
                   GST_TIME_ARGS(max));
  gst_query_set_latency(query, TRUE, min, max);
  return TRUE;
}

// The capture time (CLOCK_MONOTONIC ns) as running time of this element's pipeline clock. The
// clock's offset to CLOCK_MONOTONIC is taken now, so any clock works; GStreamer's system clock
// is CLOCK_MONOTONIC by default and then the offset is ~0.
std::optional<std::int64_t> runningTimeOf(GstElement* element, std::int64_t captureNs) {
  GstClock* clock = gst_element_get_clock(element);
  if (!clock) return std::nullopt;
  const GstClockTime clockNow = gst_clock_get_time(clock);
  const std::int64_t monoNow = zerohop::monotonicNs();
  gst_object_unref(clock);
  const GstClockTime base = gst_element_get_base_time(element);
  const std::int64_t captureOnClock = static_cast<std::int64_t>(clockNow) - (monoNow - captureNs);
  return captureOnClock - static_cast<std::int64_t>(base);  // < 0: captured before PLAYING
}

void noteLatency(ZerohopSrc* self, std::int64_t captureNs) {
  auto& s = *self->state;
  const std::int64_t now = zerohop::monotonicNs();
  if (s.lastCaptureNs > 0 && captureNs > s.lastCaptureNs) {
    const std::int64_t d = captureNs - s.lastCaptureNs;
    const std::int64_t was = s.periodNs.load();
    s.periodNs = was ? (was * 7 + d) / 8 : d;
  }
  s.lastCaptureNs = captureNs;
  s.lateness[s.latenessCount++ % kLatencyWindow] = std::max<std::int64_t>(0, now - captureNs);
  const std::size_t n = std::min(s.latenessCount, kLatencyWindow);
  s.measuredLatencyNs = *std::max_element(s.lateness.begin(), s.lateness.begin() + static_cast<long>(n));
  if (!s.latencyPosted && s.latenessCount >= 8) {
    s.latencyPosted = true;  // tell the pipeline to ask again now that we measured something
    gst_element_post_message(GST_ELEMENT(self), gst_message_new_latency(GST_OBJECT(self)));
  }
}

struct LeaseHolder {
  zerohop::SharedFrame frame;
};

// The buffer's last reference went: note whether the publisher rewrote the slot while it lived
// (counted as an overrun), then give the lease back.
void releaseLease(gpointer data) {
  auto* holder = static_cast<LeaseHolder*>(data);
  (void)holder->frame.valid();
  delete holder;
}

// Device frames: one device-to-device copy into a GstCudaMemory buffer (GStreamer 1.22 cannot wrap
// the slot), after the producer's event; the copy is complete on return, so the lease ends with
// `shared` in the caller. nullptr after posting an element error.
GstBuffer* copyDeviceFrame(ZerohopSrc* self, const zerohop::SharedFrame& shared) {
  auto& s = *self->state;
  try {
    if (!s.cuda) {
      GstCaps* caps = nullptr;
      GST_OBJECT_LOCK(self);
      if (s.caps) caps = gst_caps_ref(s.caps);
      GST_OBJECT_UNLOCK(self);
      if (!caps) throw zerohop::Error(zerohop::Errc::kInvalidArgument, "no caps yet");
      std::unique_ptr<zerohop::gst::DeviceFrameCopier> copier;
      try {
        copier = zerohop::gst::DeviceFrameCopier::open(shared.frame().gpu.device, s.layout, caps);
      } catch (...) {
        gst_caps_unref(caps);
        throw;
      }
      gst_caps_unref(caps);
      GST_OBJECT_LOCK(self);
      s.cudaContext = copier->context();
      GST_OBJECT_UNLOCK(self);
      s.cuda = std::move(copier);
      GST_INFO_OBJECT(self, "device frames: one device-to-device copy each into GstCudaMemory on CUDA device %d",
                      shared.frame().gpu.device);
    }
    const std::uint64_t before = s.cuda->bytesCopied();
    GstBuffer* buf = s.cuda->copy(shared);
    s.bytesCopied += s.cuda->bytesCopied() - before;
    ++s.copies;
    if (!shared.valid()) GST_BUFFER_FLAG_SET(buf, GST_BUFFER_FLAG_CORRUPTED);  // rewritten while copied
    return buf;
  } catch (const zerohop::Error& e) {
    GST_ELEMENT_ERROR(self, RESOURCE, READ, ("cannot hand out the share's device frames as CUDA memory"),
                      ("%s: %s", zerohop::errcName(e.code()), e.what()));
    return nullptr;
  }
}

// Wraps the slot in place: one read-only memory over the whole slot, a GstVideoMeta for the
// ring's plane offsets and pitches. Copies only when downstream cannot take a GstVideoMeta and
// the ring's layout differs from GStreamer's default one.
GstBuffer* wrapFrame(ZerohopSrc* self, zerohop::SharedFrame&& shared) {
  auto& s = *self->state;
  const zerohop::Frame& f = shared.frame();
  if (s.encoded) {
    auto* holder = new LeaseHolder{std::move(shared)};
    const zerohop::Frame& hf = holder->frame.frame();
    GstBuffer* buf = gst_buffer_new_wrapped_full(GST_MEMORY_FLAG_READONLY, hf.data[0], hf.bytesUsed, 0,
                                                 hf.bytesUsed, holder, releaseLease);
    if (!hf.keyframe && !s.opus)
      GST_BUFFER_FLAG_SET(buf, GST_BUFFER_FLAG_DELTA_UNIT);  // Opus: every packet decodes
    return buf;
  }
  gsize offsets[GST_VIDEO_MAX_PLANES] = {};
  gint strides[GST_VIDEO_MAX_PLANES] = {};
  const guint planes = GST_VIDEO_INFO_N_PLANES(&s.info);
  bool defaultLayout = true;
  gsize end = 0;
  for (guint p = 0; p < planes && p < zerohop::kMaxPlanes; ++p) {
    offsets[p] = static_cast<gsize>(f.data[p] - f.data[0]);
    strides[p] = static_cast<gint>(f.pitch[p]);
    const gsize rows = s.planeRows[p];
    end = std::max(end, offsets[p] + static_cast<gsize>(strides[p]) * rows);
    defaultLayout = defaultLayout && offsets[p] == GST_VIDEO_INFO_PLANE_OFFSET(&s.info, p) &&
                    strides[p] == GST_VIDEO_INFO_PLANE_STRIDE(&s.info, p);
  }
  const gsize size = std::max<gsize>(end, defaultLayout ? GST_VIDEO_INFO_SIZE(&s.info) : end);
  const gsize maxsize = std::max<gsize>(size, f.capacity);
  if (!s.videoMetaOk && !defaultLayout) {
    // Downstream reads GStreamer's default layout only: one copy into it.
    GstBuffer* out = gst_buffer_new_allocate(nullptr, GST_VIDEO_INFO_SIZE(&s.info), nullptr);
    GstVideoFrame dst;
    if (gst_video_frame_map(&dst, &s.info, out, GST_MAP_WRITE)) {
      for (guint p = 0; p < planes; ++p) {
        const guint rows = GST_VIDEO_FRAME_COMP_HEIGHT(&dst, p);
        const guint bytes = std::min<guint>(static_cast<guint>(strides[p]),
                                            static_cast<guint>(GST_VIDEO_FRAME_PLANE_STRIDE(&dst, p)));
        auto* d = static_cast<guint8*>(GST_VIDEO_FRAME_PLANE_DATA(&dst, p));
        for (guint r = 0; r < rows; ++r) {
          memcpy(d + static_cast<gsize>(r) * GST_VIDEO_FRAME_PLANE_STRIDE(&dst, p),
                 f.data[p] + static_cast<gsize>(r) * f.pitch[p], bytes);
        }
        s.bytesCopied += static_cast<std::uint64_t>(bytes) * rows;
      }
      gst_video_frame_unmap(&dst);
    }
    if (!shared.valid()) GST_BUFFER_FLAG_SET(out, GST_BUFFER_FLAG_CORRUPTED);  // rewritten while copied
    ++s.copies;
    return out;  // `shared` goes out of scope in the caller: the lease ends here
  }
  auto* holder = new LeaseHolder{std::move(shared)};
  GstBuffer* buf = gst_buffer_new_wrapped_full(GST_MEMORY_FLAG_READONLY, holder->frame.frame().data[0],
                                               maxsize, 0, size, holder, releaseLease);
  gst_buffer_add_video_meta_full(buf, GST_VIDEO_FRAME_FLAG_NONE, GST_VIDEO_INFO_FORMAT(&s.info),
                                 GST_VIDEO_INFO_WIDTH(&s.info), GST_VIDEO_INFO_HEIGHT(&s.info), planes,
                                 offsets, strides);
  return buf;
}

// The publisher went away: error, EOS, or reattach (bounded by flushing).
GstFlowReturn onPublisherGone(ZerohopSrc* self, const std::string& why) {
  auto& s = *self->state;
  PublisherGone mode;
  guint intervalMs;
  {
    std::lock_guard g(s.lock);
    mode = s.onGone;
    intervalMs = std::max<guint>(s.reconnectIntervalMs, 10);
  }
  if (mode == PublisherGone::kError) {
    GST_ELEMENT_ERROR(self, RESOURCE, READ, ("the publisher of the share went away"), ("%s", why.c_str()));
    return GST_FLOW_ERROR;
  }
  if (mode == PublisherGone::kEos) {
    GST_INFO_OBJECT(self, "publisher gone (%s): EOS", why.c_str());
    return GST_FLOW_EOS;
  }
  GST_INFO_OBJECT(self, "publisher gone (%s): reattaching every %u ms", why.c_str(), intervalMs);
  while (!s.flushing) {
    if (connect(self, false)) {
      ++s.reconnects;
      s.lastCaptureNs = 0;
      GstCaps* caps = capsFromSubscriber(self);
      if (!caps) return GST_FLOW_ERROR;
      GstCaps* current = gst_pad_get_current_caps(GST_BASE_SRC_PAD(self));
      const bool same = current && gst_caps_is_equal(current, caps);
      if (current) gst_caps_unref(current);
      // A sound share's caps are fixed at its next packet (fixOpusChannels: these leave the channels open).
      if (!same && !s.opus && !gst_base_src_set_caps(GST_BASE_SRC(self), caps)) {
        gst_caps_unref(caps);
        return GST_FLOW_NOT_NEGOTIATED;
      }
      gst_caps_unref(caps);
      GST_INFO_OBJECT(self, "reattached to the share");
      return GST_FLOW_OK;
    }
    for (guint waited = 0; waited < intervalMs && !s.flushing; waited += 10) g_usleep(10 * 1000);
  }
  return GST_FLOW_FLUSHING;
}

// A sound share does not say its channel count: the caps take it from the first packet's TOC (as
// `zerohop record` does), before that packet goes out. False when downstream refuses them.
bool fixOpusChannels(ZerohopSrc* self, const zerohop::Frame& packet) {
  auto& s = *self->state;
  if (!s.opus || s.opusChannels != 0 || packet.bytesUsed == 0) return true;
  s.opusChannels = zerohop::opusPacketChannels(packet.data[0], packet.bytesUsed);
  GstCaps* caps = zerohop::gst::opusCaps(s.opusChannels);
  GstCaps* current = gst_pad_get_current_caps(GST_BASE_SRC_PAD(self));
  const bool same = current && gst_caps_is_equal(current, caps);
  if (current) gst_caps_unref(current);
  GST_OBJECT_LOCK(self);
  gst_caps_replace(&s.caps, caps);
  GST_OBJECT_UNLOCK(self);
  const bool ok = same || gst_base_src_set_caps(GST_BASE_SRC(self), caps);
  gst_caps_unref(caps);
  if (!ok) {
    GST_ELEMENT_ERROR(self, CORE, NEGOTIATION, ("downstream refused %d-channel Opus", s.opusChannels),
                      (nullptr));
  }
  return ok;
}

GstFlowReturn srcCreate(GstPushSrc* push, GstBuffer** out) {
  auto* self = ZEROHOP_SRC(push);
  auto& s = *self->state;
  for (;;) {
    if (s.flushing) return GST_FLOW_FLUSHING;
    std::optional<zerohop::SharedFrame> shared;
    try {
      shared = s.sub->next(100ms);  // short, so unlock() is honoured within 100 ms
    } catch (const zerohop::Error& e) {
      if (e.code() != zerohop::Errc::kUnavailable) {
        GST_ELEMENT_ERROR(self, RESOURCE, READ, ("reading the share failed"),
                          ("%s: %s", zerohop::errcName(e.code()), e.what()));
        return GST_FLOW_ERROR;
      }
      const GstFlowReturn r = onPublisherGone(self, e.what());
      if (r != GST_FLOW_OK) return r;
      continue;
    }
    if (!shared) continue;
    const zerohop::Frame& f = shared->frame();
    const std::int64_t captureNs = f.captureNs() ? f.captureNs() : shared->publishNs();
    const std::uint64_t sequence = f.sequence;
    const auto running = runningTimeOf(GST_ELEMENT(self), captureNs);
    if (running && *running < 0) {
      // Captured before the pipeline went to PLAYING (the ring's frame when we subscribed, or one
      // from a pause): a live source has nothing from then; skip it and release its lease.
      GST_LOG_OBJECT(self, "skipping frame %" G_GUINT64_FORMAT ", captured before PLAYING", sequence);
      continue;
    }
    noteLatency(self, captureNs);
    if (!fixOpusChannels(self, f)) return GST_FLOW_NOT_NEGOTIATED;
    GstBuffer* buf = s.device ? copyDeviceFrame(self, *shared) : wrapFrame(self, std::move(*shared));
    if (!buf) return GST_FLOW_ERROR;
    const GstClockTime pts = running ? static_cast<GstClockTime>(*running) : GST_CLOCK_TIME_NONE;
    GST_BUFFER_PTS(buf) = pts;
    GST_BUFFER_DTS(buf) = pts;
    GST_BUFFER_OFFSET(buf) = sequence;
    ++s.frames;
    publishCounters(s);
    *out = buf;
    return GST_FLOW_OK;
  }
}

void srcSetProperty(GObject* object, guint id, const GValue* value, GParamSpec* pspec) {
  auto& s = stateOf(object);
  std::lock_guard g(s.lock);
  switch (id) {
    case PROP_SHARE:
      s.share = g_value_get_string(value) ? g_value_get_string(value) : "";
      break;
    case PROP_OPEN_TIMEOUT:
      s.openTimeoutMs = g_value_get_uint(value);
      break;
    case PROP_ON_PUBLISHER_GONE:
      s.onGone = static_cast<PublisherGone>(g_value_get_enum(value));
      break;
    case PROP_RECONNECT_INTERVAL:
      s.reconnectIntervalMs = g_value_get_uint(value);
      break;
    case PROP_LATENCY:
      s.latencyNs = g_value_get_int64(value);
      break;
    default:
      G_OBJECT_WARN_INVALID_PROPERTY_ID(object, id, pspec);
  }
}

void srcGetProperty(GObject* object, guint id, GValue* value, GParamSpec* pspec) {
  auto& s = stateOf(object);
  std::lock_guard g(s.lock);
  switch (id) {
    case PROP_SHARE:
      g_value_set_string(value, s.share.c_str());
      break;
    case PROP_OPEN_TIMEOUT:
      g_value_set_uint(value, s.openTimeoutMs);
      break;
    case PROP_ON_PUBLISHER_GONE:
      g_value_set_enum(value, static_cast<gint>(s.onGone));
      break;
    case PROP_RECONNECT_INTERVAL:
      g_value_set_uint(value, s.reconnectIntervalMs);
      break;
    case PROP_LATENCY:
      g_value_set_int64(value, s.latencyNs);
      break;
    case PROP_FRAMES:
      g_value_set_uint64(value, s.frames.load());
      break;
    case PROP_DROPS:
      g_value_set_uint64(value, s.drops.load());
      break;
    case PROP_OVERRUNS:
      g_value_set_uint64(value, s.overruns.load());
      break;
    case PROP_COPIES:
      g_value_set_uint64(value, s.copies.load());
      break;
    case PROP_RECONNECTS:
      g_value_set_uint64(value, s.reconnects.load());
      break;
    case PROP_BYTES_COPIED:
      g_value_set_uint64(value, s.bytesCopied.load());
      break;
    default:
      G_OBJECT_WARN_INVALID_PROPERTY_ID(object, id, pspec);
  }
}

void srcFinalize(GObject* object) {
  gst_caps_replace(&ZEROHOP_SRC(object)->state->caps, nullptr);
  delete ZEROHOP_SRC(object)->state;
  G_OBJECT_CLASS(zerohop_src_parent_class)->finalize(object);
}

constexpr auto kReadOnly = static_cast<GParamFlags>(G_PARAM_READABLE | G_PARAM_STATIC_STRINGS);
constexpr auto kReadWrite = static_cast<GParamFlags>(G_PARAM_READWRITE | G_PARAM_STATIC_STRINGS);
constexpr auto kReadWriteReady =
    static_cast<GParamFlags>(G_PARAM_READWRITE | G_PARAM_STATIC_STRINGS | GST_PARAM_MUTABLE_READY);

}  // namespace

static void zerohop_src_class_init(ZerohopSrcClass* klass) {
  auto* gobject = G_OBJECT_CLASS(klass);
  auto* element = GST_ELEMENT_CLASS(klass);
  auto* base = GST_BASE_SRC_CLASS(klass);
  auto* push = GST_PUSH_SRC_CLASS(klass);
  GST_DEBUG_CATEGORY_INIT(zerohop_src_debug, "zerohopsrc", 0, "zerohop share source");

  gobject->set_property = srcSetProperty;
  gobject->get_property = srcGetProperty;
  gobject->finalize = srcFinalize;

  g_object_class_install_property(
      gobject, PROP_SHARE,
      g_param_spec_string(
          "share", "Share name",
          "Name of the zerohop share to read (as given to `zerohop serve --share NAME`: NAME for "
          "frames, NAME.h264 for the H.264 access units); the publisher must run when the "
          "element starts, or come within open-timeout",
          nullptr, kReadWriteReady));
  g_object_class_install_property(
      gobject, PROP_OPEN_TIMEOUT,
      g_param_spec_uint("open-timeout", "Open timeout",
                        "Milliseconds the element's start waits for the share to be served: not yet "
                        "published, or its publisher died (socket file left) and is restarting; 0: fail "
                        "at once",
                        0, 3'600'000, 0, kReadWriteReady));
  g_object_class_install_property(
      gobject, PROP_ON_PUBLISHER_GONE,
      g_param_spec_enum(
          "on-publisher-gone", "On publisher gone",
          "What to do when the publisher exits or dies: error (post an error), eos (end the "
          "stream), wait (keep running without buffers and reattach when a publisher of the same "
          "name returns, trying every reconnect-interval ms; new caps if its format changed)",
          publisherGoneType(), static_cast<gint>(PublisherGone::kError), kReadWrite));
  g_object_class_install_property(
      gobject, PROP_RECONNECT_INTERVAL,
      g_param_spec_uint("reconnect-interval", "Reconnect interval",
                        "Milliseconds between attempts to reattach with on-publisher-gone=wait", 10, 60000,
                        500, kReadWrite));
  g_object_class_install_property(
      gobject, PROP_LATENCY,
      g_param_spec_int64(
          "latency", "Latency",
          "Latency to report in the latency query, in ns; -1 = measured: the largest capture -> "
          "push delay of the last 32 frames (the capture time is the publisher's frame stamp)",
          -1, G_MAXINT64, kLatencyMeasured, kReadWrite));
  g_object_class_install_property(
      gobject, PROP_FRAMES,
      g_param_spec_uint64("frames", "Frames", "Frames read from the share and pushed", 0, G_MAXUINT64, 0,
                          kReadOnly));
  g_object_class_install_property(
      gobject, PROP_DROPS,
      g_param_spec_uint64("drops", "Drops",
                          "Frames the publisher published that this element never saw because the ring had "
                          "overwritten them before it read (downstream too slow); the publisher never waits",
                          0, G_MAXUINT64, 0, kReadOnly));
  g_object_class_install_property(
      gobject, PROP_OVERRUNS,
      g_param_spec_uint64(
          "overruns", "Overruns",
          "Frames whose slot the publisher rewrote while they were read or while their buffer lived "
          "(a buffer held past the share's lease timeout, or every slot leased): what downstream read "
          "may be torn; checked when each buffer is freed",
          0, G_MAXUINT64, 0, kReadOnly));
  g_object_class_install_property(
      gobject, PROP_COPIES,
      g_param_spec_uint64("copies", "Copies",
                          "Frames copied instead of wrapped in place: host frames when downstream did not "
                          "accept GstVideoMeta and the ring's pitches differ from GStreamer's default layout; "
                          "every device frame (GStreamer 1.22 cannot wrap foreign device memory: one "
                          "device-to-device copy into GstCudaMemory each)",
                          0, G_MAXUINT64, 0, kReadOnly));
  g_object_class_install_property(
      gobject, PROP_BYTES_COPIED,
      g_param_spec_uint64("bytes-copied", "Bytes copied",
                          "Payload bytes those copies moved (host to host, or device to device); 0 while every "
                          "frame is wrapped in place",
                          0, G_MAXUINT64, 0, kReadOnly));
  g_object_class_install_property(
      gobject, PROP_RECONNECTS,
      g_param_spec_uint64("reconnects", "Reconnects", "Times the element reattached to a returning publisher",
                          0, G_MAXUINT64, 0, kReadOnly));

  gst_element_class_add_pad_template(element, zerohop::gst::shareTemplate("src", GST_PAD_SRC));
  gst_element_class_set_static_metadata(
      element, "zerohop share source", "Source/Video",
      "Reads frames published in a zerohop share. Host shares without copying: each buffer wraps the ring "
      "slot and holds its read lease until freed; raw video or H.264 byte-stream access units. Device "
      "shares as video/x-raw(memory:CUDAMemory) where the plugin was built with gstreamer-cuda-1.0: one "
      "device-to-device copy per frame, after the producer's CUDA event, on the share device's primary "
      "context. Timestamps are the capture times on the pipeline clock.",
      "zerohop");

  base->start = srcStart;
  base->stop = srcStop;
  base->get_caps = srcGetCaps;
  base->decide_allocation = srcDecideAllocation;
  base->unlock = srcUnlock;
  base->unlock_stop = srcUnlockStop;
  base->query = srcQuery;
  push->create = srcCreate;
}

static void zerohop_src_init(ZerohopSrc* self) {
  self->state = new SrcState();
  gst_base_src_set_live(GST_BASE_SRC(self), TRUE);
  gst_base_src_set_format(GST_BASE_SRC(self), GST_FORMAT_TIME);
  gst_base_src_set_do_timestamp(GST_BASE_SRC(self), FALSE);
}
