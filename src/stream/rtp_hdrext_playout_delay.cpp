// The playout-delay RTP header extension as a GstRTPHeaderExtension (rtp_header_extensions.hpp).
#include <mutex>

#include "stream/rtp_header_extensions.hpp"

namespace zerohop::stream {
namespace {

struct PlayoutDelayExt {
  GstRTPHeaderExtension parent;
  gint packed;  // the 3 payload bytes as one number; set before the pipeline runs, read with g_atomic_int_get
};
struct PlayoutDelayExtClass {
  GstRTPHeaderExtensionClass parent_class;
};

G_DEFINE_TYPE(PlayoutDelayExt, zh_playout_delay_ext, GST_TYPE_RTP_HEADER_EXTENSION)

gsize maxSize(GstRTPHeaderExtension*, const GstBuffer*) { return 3; }

gssize write(GstRTPHeaderExtension* ext, const GstBuffer*, GstRTPHeaderExtensionFlags, GstBuffer*, guint8* data,
             gsize size) {
  if (size < 3) return -1;
  const auto packed = static_cast<guint32>(g_atomic_int_get(&reinterpret_cast<PlayoutDelayExt*>(ext)->packed));
  data[0] = static_cast<guint8>(packed >> 16);
  data[1] = static_cast<guint8>(packed >> 8);
  data[2] = static_cast<guint8>(packed);
  return 3;
}

void zh_playout_delay_ext_class_init(PlayoutDelayExtClass* klass) {
  initHeaderExtensionClass(GST_RTP_HEADER_EXTENSION_CLASS(klass),
                           {maxSize, write, readWith<decodePlayoutDelay>, "RTP playout-delay header extension",
                            "The sender's minimum and maximum playout delay for the receiver (zerohop)", kPlayoutDelayUri});
}

void zh_playout_delay_ext_init(PlayoutDelayExt* self) { g_atomic_int_set(&self->packed, 0); }

}  // namespace

GstRTPHeaderExtension* newPlayoutDelayExtension(PlayoutDelay delay) {
  checkPlayoutDelay(delay, "playout delay");
  static std::once_flag once;
  std::call_once(once, [] { registerHeaderExtension("zerohoprtphdrextplayoutdelay", zh_playout_delay_ext_get_type()); });
  auto* ext = static_cast<PlayoutDelayExt*>(g_object_new(zh_playout_delay_ext_get_type(), nullptr));
  const auto bytes = encodePlayoutDelay(delay);
  g_atomic_int_set(&ext->packed, static_cast<gint>((guint32{bytes[0]} << 16) | (guint32{bytes[1]} << 8) | bytes[2]));
  return GST_RTP_HEADER_EXTENSION(ext);
}

}  // namespace zerohop::stream
