// The playout-delay RTP header extension as a GstRTPHeaderExtension (rtp_header_extensions.hpp).
#include <mutex>

#include "stream/rtp_header_extensions.hpp"

namespace zerohop::stream {
namespace {

struct PlayoutDelayExt {
  GstRTPHeaderExtension parent;
  gint packed;  // the 3 payload bytes as one number; written and read with g_atomic_int_*
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
  auto* ext = GST_RTP_HEADER_EXTENSION(g_object_new(zh_playout_delay_ext_get_type(), nullptr));
  setPlayoutDelayExtension(ext, delay);
  return ext;
}

bool setPlayoutDelayExtension(GstRTPHeaderExtension* ext, PlayoutDelay delay) {
  if (!ext || !G_TYPE_CHECK_INSTANCE_TYPE(ext, zh_playout_delay_ext_get_type())) return false;
  checkPlayoutDelay(delay, "playout delay");
  const auto bytes = encodePlayoutDelay(delay);
  g_atomic_int_set(&reinterpret_cast<PlayoutDelayExt*>(ext)->packed,
                   static_cast<gint>((guint32{bytes[0]} << 16) | (guint32{bytes[1]} << 8) | bytes[2]));
  return true;
}

}  // namespace zerohop::stream
