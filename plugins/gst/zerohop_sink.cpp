#include "zerohop_sink.hpp"

#include <gst/video/video.h>

#include <algorithm>
#include <atomic>
#include <memory>
#include <mutex>
#include <string>

#include "caps.hpp"
#include "cuda_frames.hpp"
#include "zerohop/clock.hpp"
#include "zerohop/error.hpp"
#include "zerohop/share.hpp"

GST_DEBUG_CATEGORY_STATIC(zerohop_sink_debug);
#define GST_CAT_DEFAULT zerohop_sink_debug

namespace {

// A sound ring (audio/x-opus): a slot holds one packet, and a ring at least a second of 20 ms packets,
// as serve's NAME.opus does, so a reader that wakes late misses none (4 slots would be 80 ms).
constexpr guint kOpusSlotBytes = 8192;
constexpr guint kOpusMinSlots = 50;

enum {
  PROP_0,
  PROP_SHARE,
  PROP_SLOTS,
  PROP_MAX_UNIT_BYTES,
  PROP_CUDA_DEVICE,
  PROP_PUBLISHED,
  PROP_READERS,
  PROP_OVERRUNS,
  PROP_BYTES_COPIED,
  PROP_DOWNLOADS,
};

struct SinkState {
  std::mutex lock;  // guards the settings
  std::string share;
  guint slots = 4;
  guint maxUnitBytes = 4u << 20;
  gint cudaDevice = 0;

  // Streaming thread (set_caps, render) and stop.
  std::unique_ptr<zerohop::Publisher> publisher;
  GstVideoInfo info{};
  zerohop::PixelFormat format = zerohop::PixelFormat::kUnknown;
  bool encoded = false;
  std::uint64_t sequence = 0;
  // CUDA memory in: the device ring is made at the first buffer (its memory names the device).
  bool cudaIn = false;
  std::string deviceShare;  // the name the device ring will take (set_caps)
  zerohop::ImageLayout layout{};
  guint slotCount = 4;

  std::atomic<std::uint64_t> published{0};
  std::atomic<std::uint32_t> readers{0};
  std::atomic<std::uint64_t> overruns{0};
  std::atomic<std::uint64_t> bytesCopied{0};
  std::atomic<std::uint64_t> downloads{0};
};

}  // namespace

struct _ZerohopSink {
  GstBaseSink parent;
  SinkState* state;
};

G_DEFINE_TYPE(ZerohopSink, zerohop_sink, GST_TYPE_BASE_SINK)

namespace {

SinkState& stateOf(gpointer self) {
  return *ZEROHOP_SINK(self)->state;
}


gboolean sinkSetCaps(GstBaseSink* base, GstCaps* caps) {
  auto* self = ZEROHOP_SINK(base);
  auto& s = *self->state;
  std::string share;
  guint slots, maxUnit;
  {
    std::lock_guard g(s.lock);
    share = s.share;
    slots = s.slots;
    maxUnit = s.maxUnitBytes;
  }
  if (share.empty()) {
    GST_ELEMENT_ERROR(self, RESOURCE, NOT_FOUND, ("no share name"), ("set the 'share' property"));
    return FALSE;
  }
  const GstStructure* st = gst_caps_get_structure(caps, 0);
  zerohop::SlotLayout layout;
  try {
    if (gst_structure_has_name(st, "video/x-h264")) {
      s.encoded = true;
      s.format = zerohop::PixelFormat::kH264;
      layout = zerohop::SlotLayout::encoded(zerohop::PixelFormat::kH264, maxUnit, slots);
    } else if (gst_structure_has_name(st, "audio/x-opus")) {
      // Sound: one Opus packet a slot (at most 1,275 bytes a frame, a few frames a packet).
      s.encoded = true;
      s.format = zerohop::PixelFormat::kOpus;
      layout =
          zerohop::SlotLayout::encoded(zerohop::PixelFormat::kOpus, std::min<guint>(maxUnit, kOpusSlotBytes),
                                       std::max<guint>(slots, kOpusMinSlots));
    } else {
      if (!gst_video_info_from_caps(&s.info, caps)) return FALSE;
      const auto fmt = zerohop::gst::pixelFormatOf(GST_VIDEO_INFO_FORMAT(&s.info));
      if (!fmt) return FALSE;
      s.encoded = false;
      s.format = *fmt;
      layout = zerohop::SlotLayout::images(
          zerohop::computeLayout(*fmt, GST_VIDEO_INFO_WIDTH(&s.info), GST_VIDEO_INFO_HEIGHT(&s.info)), slots);
    }
    const GstCapsFeatures* features = gst_caps_get_features(caps, 0);
    s.cudaIn = !s.encoded && features && gst_caps_features_contains(features, "memory:CUDAMemory");
    // New caps = a new ring geometry: readers see the old share go away and reconnect to the new one.
    s.publisher.reset();
    if (s.cudaIn) {
      s.deviceShare = share;  // a device ring, made at the first buffer, on the device its memory is on
      s.layout = layout.image;
      s.slotCount = slots;
    } else {
      s.publisher = std::make_unique<zerohop::Publisher>(share, layout);
    }
  } catch (const zerohop::Error& e) {
    GST_ELEMENT_ERROR(self, RESOURCE, OPEN_WRITE, ("cannot publish share '%s'", share.c_str()),
                      ("%s: %s", zerohop::errcName(e.code()), e.what()));
    return FALSE;
  }
  GST_INFO_OBJECT(self, "publishing '%s' (%" GST_PTR_FORMAT ")", share.c_str(), static_cast<void*>(caps));
  return TRUE;
}

// The buffer's timestamp as a CLOCK_MONOTONIC capture time (what zerohop readers expect);
// now when the buffer has none or the element has no clock.
std::int64_t captureNsOf(GstBaseSink* base, GstBuffer* buf) {
  const std::int64_t monoNow = zerohop::monotonicNs();
  if (!GST_BUFFER_PTS_IS_VALID(buf)) return monoNow;
  GstClock* clock = gst_element_get_clock(GST_ELEMENT(base));
  if (!clock) return monoNow;
  const GstClockTime clockNow = gst_clock_get_time(clock);
  gst_object_unref(clock);
  GstSegment* segment = &base->segment;
  const GstClockTime running = gst_segment_to_running_time(segment, GST_FORMAT_TIME, GST_BUFFER_PTS(buf));
  if (!GST_CLOCK_TIME_IS_VALID(running)) return monoNow;
  const std::int64_t onClock =
      static_cast<std::int64_t>(running + gst_element_get_base_time(GST_ELEMENT(base)));
  const std::int64_t t = monoNow - (static_cast<std::int64_t>(clockNow) - onClock);
  return t > monoNow ? monoNow : t;  // a buffer stamped in the future was not captured yet: now
}

// A host Frame over a mapped system-memory video frame (the planes the publisher copies).
zerohop::Frame hostFrameOf(const SinkState& s, GstVideoFrame& vf) {
  zerohop::Frame f;
  f.format = s.format;
  f.width = GST_VIDEO_FRAME_WIDTH(&vf);
  f.height = GST_VIDEO_FRAME_HEIGHT(&vf);
  f.memory = zerohop::MemoryKind::kHost;
  f.planeCount = GST_VIDEO_FRAME_N_PLANES(&vf);
  for (guint p = 0; p < f.planeCount && p < zerohop::kMaxPlanes; ++p) {
    f.data[p] = static_cast<std::uint8_t*>(GST_VIDEO_FRAME_PLANE_DATA(&vf, p));
    f.pitch[p] = static_cast<std::uint32_t>(GST_VIDEO_FRAME_PLANE_STRIDE(&vf, p));
  }
  f.bytesUsed = GST_VIDEO_FRAME_SIZE(&vf);
  return f;
}

// CUDA memory in: one device-to-device copy into the device ring's slot on the publisher's stream.
// Memory of another CUDA context than the device's primary one (an upstream element that did not
// take the context this sink offers) goes through host memory instead: mapped for the CPU
// (GStreamer downloads it in its own context), then copied up into the slot; counted in `downloads`.
void publishCuda(ZerohopSink* self, GstBuffer* buf, std::int64_t captureNs, std::int64_t wallMs) {
  auto& s = *self->state;
  auto view = zerohop::gst::CudaBufferView::map(buf, s.info);
  if (!s.publisher) {
    const int device = view->frame().gpu.device;
    s.publisher = std::make_unique<zerohop::Publisher>(
        s.deviceShare, zerohop::SlotLayout::deviceImages(s.layout, s.slotCount, device));
    GST_INFO_OBJECT(self, "publishing '%s' as a device share on CUDA device %d", s.deviceShare.c_str(), device);
  }
  if (view->onPrimaryContext()) {
    zerohop::Frame f = view->frame();
    f.format = s.format;
    f.sequence = s.sequence++;
    f.wallClockMs = wallMs;
    f.times.mark(zerohop::Stage::kCapture, captureNs);
    s.publisher->publish(f);  // cudaMemcpy2DAsync on the publisher's stream; returns when copied
    return;
  }
  view.reset();
  GstVideoFrame vf;
  if (!gst_video_frame_map(&vf, &s.info, buf, GST_MAP_READ)) {
    throw zerohop::Error(zerohop::Errc::kDevice, "cannot download a CUDA buffer of another CUDA context");
  }
  zerohop::Frame f = hostFrameOf(s, vf);
  f.sequence = s.sequence++;
  f.wallClockMs = wallMs;
  f.times.mark(zerohop::Stage::kCapture, captureNs);
  try {
    s.publisher->publish(f);
  } catch (...) {
    gst_video_frame_unmap(&vf);
    throw;
  }
  gst_video_frame_unmap(&vf);
  if (s.downloads++ == 0) {
    GST_WARNING_OBJECT(self, "CUDA buffers of a context other than the device's primary one: each goes "
                             "through host memory (the upstream element did not take this sink's CUDA context)");
  }
}

GstFlowReturn sinkRender(GstBaseSink* base, GstBuffer* buf) {
  auto* self = ZEROHOP_SINK(base);
  auto& s = *self->state;
  if (!s.publisher && !s.cudaIn) return GST_FLOW_NOT_NEGOTIATED;
  const std::int64_t captureNs = captureNsOf(base, buf);
  const std::int64_t wallMs = (zerohop::realtimeNs() - (zerohop::monotonicNs() - captureNs)) / 1000000;
  try {
    if (s.cudaIn) {
      publishCuda(self, buf, captureNs, wallMs);
    } else if (s.encoded) {
      GstMapInfo map;
      if (!gst_buffer_map(buf, &map, GST_MAP_READ)) return GST_FLOW_ERROR;
      zerohop::Frame unit;  // an encoded ring takes bytesUsed bytes of data[0]: the one copy
      unit.format = s.format;
      unit.planeCount = 1;
      unit.data[0] = map.data;
      unit.bytesUsed = map.size;
      unit.keyframe =
          s.format == zerohop::PixelFormat::kOpus || !GST_BUFFER_FLAG_IS_SET(buf, GST_BUFFER_FLAG_DELTA_UNIT);
      unit.sequence = s.sequence++;
      unit.wallClockMs = wallMs;
      unit.times.mark(zerohop::Stage::kCapture, captureNs);
      try {
        s.publisher->publish(unit);
      } catch (...) {
        gst_buffer_unmap(buf, &map);
        throw;
      }
      gst_buffer_unmap(buf, &map);
    } else {
      GstVideoFrame vf;
      if (!gst_video_frame_map(&vf, &s.info, buf, GST_MAP_READ)) {
        GST_ELEMENT_ERROR(self, STREAM, FAILED, ("cannot map the video frame"), (nullptr));
        return GST_FLOW_ERROR;
      }
      zerohop::Frame f = hostFrameOf(s, vf);
      f.sequence = s.sequence++;
      f.wallClockMs = wallMs;
      f.times.mark(zerohop::Stage::kCapture, captureNs);
      try {
        s.publisher->publish(f);  // the one copy: buffer -> ring slot, row by row
      } catch (...) {
        gst_video_frame_unmap(&vf);
        throw;
      }
      gst_video_frame_unmap(&vf);
    }
  } catch (const zerohop::Error& e) {
    GST_ELEMENT_ERROR(self, RESOURCE, WRITE, ("publishing into the share failed"),
                      ("%s: %s", zerohop::errcName(e.code()), e.what()));
    return GST_FLOW_ERROR;
  }
  const auto st = s.publisher->stats();
  s.published = st.publishes;
  s.readers = st.readersConnected;
  s.overruns = st.overruns;
  s.bytesCopied = st.bytesCopied;
  return GST_FLOW_OK;
}

// Upstream CUDA elements asking for a context get the primary context of `cuda-device`, the one a
// device Publisher copies in, so their buffers need no trip through host memory.
gboolean sinkQuery(GstBaseSink* base, GstQuery* query) {
  auto& s = stateOf(base);
  const gchar* type = nullptr;
  if (GST_QUERY_TYPE(query) == GST_QUERY_CONTEXT && *zerohop::gst::cudaTemplateCaps() != '\0' &&
      gst_query_parse_context_type(query, &type) && g_strcmp0(type, "gst.cuda.context") == 0) {
    // Only a CUDA context query starts CUDA here (other elements ask for GL displays and the like).
    gint device;
    {
      std::lock_guard g(s.lock);
      device = s.cudaDevice;
    }
    try {
      if (zerohop::gst::answerCudaContextQuery(GST_ELEMENT(base), query, zerohop::gst::primaryCudaContext(device)))
        return TRUE;
    } catch (const zerohop::Error& e) {
      GST_DEBUG_OBJECT(base, "no CUDA context to offer: %s", e.what());
    }
  }
  return GST_BASE_SINK_CLASS(zerohop_sink_parent_class)->query(base, query);
}

gboolean sinkStart(GstBaseSink* base) {
  auto& s = stateOf(base);
  s.sequence = 0;
  s.published = 0;
  s.readers = 0;
  s.overruns = 0;
  s.bytesCopied = 0;
  s.downloads = 0;
  return TRUE;
}

gboolean sinkStop(GstBaseSink* base) {
  stateOf(base).publisher.reset();  // closes the share: readers see the publisher go away
  return TRUE;
}

void sinkSetProperty(GObject* object, guint id, const GValue* value, GParamSpec* pspec) {
  auto& s = stateOf(object);
  std::lock_guard g(s.lock);
  switch (id) {
    case PROP_SHARE:
      s.share = g_value_get_string(value) ? g_value_get_string(value) : "";
      break;
    case PROP_SLOTS:
      s.slots = g_value_get_uint(value);
      break;
    case PROP_MAX_UNIT_BYTES:
      s.maxUnitBytes = g_value_get_uint(value);
      break;
    case PROP_CUDA_DEVICE:
      s.cudaDevice = g_value_get_int(value);
      break;
    default:
      G_OBJECT_WARN_INVALID_PROPERTY_ID(object, id, pspec);
  }
}

void sinkGetProperty(GObject* object, guint id, GValue* value, GParamSpec* pspec) {
  auto& s = stateOf(object);
  std::lock_guard g(s.lock);
  switch (id) {
    case PROP_SHARE:
      g_value_set_string(value, s.share.c_str());
      break;
    case PROP_SLOTS:
      g_value_set_uint(value, s.slots);
      break;
    case PROP_MAX_UNIT_BYTES:
      g_value_set_uint(value, s.maxUnitBytes);
      break;
    case PROP_CUDA_DEVICE:
      g_value_set_int(value, s.cudaDevice);
      break;
    case PROP_BYTES_COPIED:
      g_value_set_uint64(value, s.bytesCopied.load());
      break;
    case PROP_DOWNLOADS:
      g_value_set_uint64(value, s.downloads.load());
      break;
    case PROP_PUBLISHED:
      g_value_set_uint64(value, s.published.load());
      break;
    case PROP_READERS:
      g_value_set_uint(value, s.readers.load());
      break;
    case PROP_OVERRUNS:
      g_value_set_uint64(value, s.overruns.load());
      break;
    default:
      G_OBJECT_WARN_INVALID_PROPERTY_ID(object, id, pspec);
  }
}

void sinkFinalize(GObject* object) {
  delete ZEROHOP_SINK(object)->state;
  G_OBJECT_CLASS(zerohop_sink_parent_class)->finalize(object);
}

constexpr auto kReadOnly = static_cast<GParamFlags>(G_PARAM_READABLE | G_PARAM_STATIC_STRINGS);
constexpr auto kReadWriteReady =
    static_cast<GParamFlags>(G_PARAM_READWRITE | G_PARAM_STATIC_STRINGS | GST_PARAM_MUTABLE_READY);

}  // namespace

static void zerohop_sink_class_init(ZerohopSinkClass* klass) {
  auto* gobject = G_OBJECT_CLASS(klass);
  auto* element = GST_ELEMENT_CLASS(klass);
  auto* base = GST_BASE_SINK_CLASS(klass);
  GST_DEBUG_CATEGORY_INIT(zerohop_sink_debug, "zerohopsink", 0, "zerohop share sink");

  gobject->set_property = sinkSetProperty;
  gobject->get_property = sinkGetProperty;
  gobject->finalize = sinkFinalize;

  g_object_class_install_property(
      gobject, PROP_SHARE,
      g_param_spec_string("share", "Share name",
                          "Name to publish the share under (zerohop tap NAME, zerohopsrc share=NAME, zerohop "
                          "serve --source share:NAME); fails if another publisher holds NAME",
                          nullptr, kReadWriteReady));
  g_object_class_install_property(
      gobject, PROP_SLOTS,
      g_param_spec_uint("slots", "Slots",
                        "Frames the ring holds; more slots let slower readers hold frames longer before the "
                        "publisher has to overwrite them (Opus input: at least 50, a second of packets)",
                        2, 48, 4, kReadWriteReady));
  g_object_class_install_property(
      gobject, PROP_MAX_UNIT_BYTES,
      g_param_spec_uint(
          "max-unit-bytes", "Max unit bytes",
          "H.264 and Opus input: the largest access unit or packet a slot holds (a bigger one is an "
          "error; Opus at most 8192)",
          1024, G_MAXUINT, 4u << 20, kReadWriteReady));
  g_object_class_install_property(
      gobject, PROP_PUBLISHED,
      g_param_spec_uint64("published", "Published", "Frames published into the share", 0, G_MAXUINT64, 0,
                          kReadOnly));
  g_object_class_install_property(
      gobject, PROP_READERS,
      g_param_spec_uint("readers", "Readers", "Readers attached to the share right now", 0, G_MAXUINT, 0,
                        kReadOnly));
  g_object_class_install_property(
      gobject, PROP_OVERRUNS,
      g_param_spec_uint64("overruns", "Overruns",
                          "Publishes that overwrote a slot a reader still leased (the publisher never waits)",
                          0, G_MAXUINT64, 0, kReadOnly));
  g_object_class_install_property(
      gobject, PROP_CUDA_DEVICE,
      g_param_spec_int("cuda-device", "CUDA device",
                       "CUDA memory in: the device whose primary CUDA context this sink offers to upstream CUDA "
                       "elements (their buffers are then copied device to device into the share); the share is "
                       "made on the device of the first buffer's memory",
                       0, G_MAXINT, 0, kReadWriteReady));
  g_object_class_install_property(
      gobject, PROP_BYTES_COPIED,
      g_param_spec_uint64("bytes-copied", "Bytes copied",
                          "Payload bytes the publisher copied into slots (host to host, or device to device for "
                          "CUDA memory: one copy per frame)",
                          0, G_MAXUINT64, 0, kReadOnly));
  g_object_class_install_property(
      gobject, PROP_DOWNLOADS,
      g_param_spec_uint64("downloads", "Downloads",
                          "CUDA buffers that went through host memory (downloaded, then copied into the device "
                          "share) because they were in a CUDA context other than the device's primary one",
                          0, G_MAXUINT64, 0, kReadOnly));

  gst_element_class_add_pad_template(element, zerohop::gst::shareTemplate("sink", GST_PAD_SINK));
  gst_element_class_set_static_metadata(
      element, "zerohop share sink", "Sink/Video",
      "Publishes each buffer into a zerohop share (one copy per frame: the buffer is copied into a ring "
      "slot); never blocks upstream, the publisher never waits for readers. Raw video or H.264 byte-stream "
      "access units into a host share; CUDA memory (where the plugin was built with gstreamer-cuda-1.0) "
      "into a device share, device to device. sync defaults to false (publish on arrival).",
      "zerohop");

  base->set_caps = sinkSetCaps;
  base->render = sinkRender;
  base->query = sinkQuery;
  base->start = sinkStart;
  base->stop = sinkStop;
}

static void zerohop_sink_init(ZerohopSink* self) {
  self->state = new SinkState();
  // Publish a buffer as soon as it arrives (readers get its capture time); sync=true paces by timestamps.
  gst_base_sink_set_sync(GST_BASE_SINK(self), FALSE);
  gst_base_sink_set_qos_enabled(GST_BASE_SINK(self), FALSE);
}
