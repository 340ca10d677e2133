// The abs-capture-time RTP header extension as a GstRTPHeaderExtension (rtp_header_extensions.hpp).
#include <atomic>
#include <mutex>

#include "stream/gst_handles.hpp"
#include "stream/rtp_header_extensions.hpp"

namespace zerohop::stream {
namespace {

struct AbsCaptureTimeExt {
  GstRTPHeaderExtension parent;
  // The frame last stamped: set when made, then the payloader's streaming thread only. Accessed atomically
  // (relaxed): the hand-off between the two threads is GStreamer's, through locks TSan cannot see.
  GstClockTime lastPts;
};
struct AbsCaptureTimeExtClass {
  GstRTPHeaderExtensionClass parent_class;
};

G_DEFINE_TYPE(AbsCaptureTimeExt, zh_abs_capture_time_ext, GST_TYPE_RTP_HEADER_EXTENSION)

gsize maxSize(GstRTPHeaderExtension*, const GstBuffer*) { return kAbsCaptureTimeMaxSize; }

// The first packet of each frame (a new input PTS) carries the frame's capture wall clock; the rest
// carry nothing (the spec's "SHOULD save bandwidth": receivers interpolate from the RTP timestamp).
gssize write(GstRTPHeaderExtension* ext, const GstBuffer* input, GstRTPHeaderExtensionFlags, GstBuffer*,
             guint8* data, gsize size) {
  auto* self = reinterpret_cast<AbsCaptureTimeExt*>(ext);
  if (!input || size < kAbsCaptureTimeMaxSize) return size < kAbsCaptureTimeMaxSize ? -1 : 0;
  const GstClockTime pts = GST_BUFFER_PTS(input);
  std::atomic_ref<GstClockTime> last(self->lastPts);
  if (pts == last.load(std::memory_order_relaxed) && pts != GST_CLOCK_TIME_NONE) return 0;
  GstReferenceTimestampMeta* meta =
      gst_buffer_get_reference_timestamp_meta(const_cast<GstBuffer*>(input), captureWallClockCaps());
  if (!meta) return 0;
  last.store(pts, std::memory_order_relaxed);
  AbsCaptureTime value;
  value.captureNtp = unixNsToNtp(static_cast<std::int64_t>(meta->timestamp));
  value.clockOffsetQ32 = 0;  // we are the capture system: our NTP clock is the capture clock
  return static_cast<gssize>(encodeAbsCaptureTime(value, data));
}

void zh_abs_capture_time_ext_class_init(AbsCaptureTimeExtClass* klass) {
  initHeaderExtensionClass(GST_RTP_HEADER_EXTENSION_CLASS(klass),
                           {maxSize, write, readWith<decodeAbsCaptureTime>, "RTP abs-capture-time header extension",
                            "The NTP wall clock at which each frame was captured (zerohop)", kAbsCaptureTimeUri});
}

void zh_abs_capture_time_ext_init(AbsCaptureTimeExt* self) {
  std::atomic_ref<GstClockTime>(self->lastPts).store(GST_CLOCK_TIME_NONE, std::memory_order_relaxed);
}

}  // namespace

GstCaps* captureWallClockCaps() {
  static GstCaps* caps = [] {
    ensureGstInit();
    GstCaps* c = gst_caps_new_empty_simple("timestamp/x-unix");
    GST_MINI_OBJECT_FLAG_SET(c, GST_MINI_OBJECT_FLAG_MAY_BE_LEAKED);  // lives as long as the process
    return c;
  }();
  return caps;
}

GstRTPHeaderExtension* newAbsCaptureTimeExtension() {
  static std::once_flag once;
  std::call_once(once, [] {
    registerHeaderExtension("zerohoprtphdrextabscapturetime", zh_abs_capture_time_ext_get_type());
  });
  return GST_RTP_HEADER_EXTENSION(g_object_new(zh_abs_capture_time_ext_get_type(), nullptr));
}

}  // namespace zerohop::stream
