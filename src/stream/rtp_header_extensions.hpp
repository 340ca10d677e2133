#pragma once
// The RTP header extensions the WebRTC sender writes, as GStreamer header-extension elements for the
// payloader (rtph264pay "add-extension"). GStreamer 1.22 has transport-wide-cc (rtphdrexttwcc, from
// gst-plugins-good) but no playout-delay or abs-capture-time, so those two are small
// GstRTPHeaderExtension subclasses registered in this process (element factories
// "zerohoprtphdrextplayoutdelay" and "zerohoprtphdrextabscapturetime", rank none); their payloads are
// rtp_extension_payloads.hpp.
//
//   playout-delay     every packet carries the configured MIN/MAX (3 bytes).
//   abs-capture-time  the first packet of every frame carries the frame's capture wall clock as NTP,
//                     with a capture clock offset of 0 (16 bytes: zerohop is the capture system and
//                     its RTCP sender reports use the same clock, CLOCK_REALTIME). The wall clock
//                     comes from the input buffer's GstReferenceTimestampMeta with
//                     captureWallClockCaps() (wrapEncodedUnit sets it); a buffer without one gets none.
//
// Thread-safety: the new*() functions are thread-safe; an extension is then used by its payloader's
// streaming thread only.

#include <gst/rtp/gstrtphdrext.h>

#include "stream/rtp_extension_payloads.hpp"

namespace zerohop::stream {

/// What our two extension classes differ in; initHeaderExtensionClass fills in the rest (both take one-
/// and two-byte headers) and registerHeaderExtension makes the element factory, once per type.
struct HeaderExtensionClassSpec {
  gsize (*maxSize)(GstRTPHeaderExtension*, const GstBuffer*);
  gssize (*write)(GstRTPHeaderExtension*, const GstBuffer*, GstRTPHeaderExtensionFlags, GstBuffer*, guint8*, gsize);
  gboolean (*read)(GstRTPHeaderExtension*, GstRTPHeaderExtensionFlags, const guint8*, gsize, GstBuffer*);
  const char* longName;
  const char* description;
  std::string_view uri;
};
void initHeaderExtensionClass(GstRTPHeaderExtensionClass* klass, const HeaderExtensionClassSpec& spec);
/// A read vfunc that accepts what `decode` (rtp_extension_payloads.hpp) can parse; it adds no meta.
template <auto decode>
gboolean readWith(GstRTPHeaderExtension*, GstRTPHeaderExtensionFlags, const guint8* data, gsize size, GstBuffer*) {
  return decode(data, size).has_value();
}
void registerHeaderExtension(const char* factoryName, GType type);

/// "timestamp/x-unix": the caps of the GstReferenceTimestampMeta that carries a unit's capture wall
/// clock (ns since 1970) to the payloader. A static object: never unref it.
GstCaps* captureWallClockCaps();

/// A new playout-delay extension (floating reference, as any new element) writing `delay` (checked).
GstRTPHeaderExtension* newPlayoutDelayExtension(PlayoutDelay delay);
/// The delay a playout-delay extension from newPlayoutDelayExtension() writes from its next packet on
/// (checked as checkPlayoutDelay; thread-safe). False, changing nothing, for any other extension.
bool setPlayoutDelayExtension(GstRTPHeaderExtension* ext, PlayoutDelay delay);
/// A new abs-capture-time extension (floating reference).
GstRTPHeaderExtension* newAbsCaptureTimeExtension();

/// Makes the extension element for `uri` with `id` set, or null for a URI we do not send. Throws
/// Error(kUnavailable) when transport-wide-cc's element (rtphdrexttwcc) is not installed.
GstRTPHeaderExtension* makeRtpExtension(const RtpExtension& ext, PlayoutDelay playoutDelay);

}  // namespace zerohop::stream
