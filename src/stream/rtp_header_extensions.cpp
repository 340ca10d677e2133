// Which RTP header extensions the sender writes, and the element for each (rtp_header_extensions.hpp).
#include "stream/rtp_header_extensions.hpp"

#include "zerohop/error.hpp"

namespace zerohop::stream {

GstRTPHeaderExtension* makeRtpExtension(const RtpExtension& ext, PlayoutDelay playoutDelay) {
  GstRTPHeaderExtension* made = nullptr;
  if (ext.uri == kPlayoutDelayUri) {
    made = newPlayoutDelayExtension(playoutDelay);
  } else if (ext.uri == kAbsCaptureTimeUri) {
    made = newAbsCaptureTimeExtension();
  } else if (ext.uri == kTransportWideCcUri) {
    GstElement* twcc = gst_element_factory_make("rtphdrexttwcc", nullptr);
    if (!twcc) {
      throw Error(Errc::kUnavailable,
                  "gst_element_factory_make(\"rtphdrexttwcc\") returned NULL: install gstreamer1.0-plugins-good "
                  "(scripts/install-deps.sh)");
    }
    made = GST_RTP_HEADER_EXTENSION(twcc);
  } else {
    return nullptr;
  }
  gst_rtp_header_extension_set_id(made, static_cast<guint>(ext.id));
  return made;
}

}  // namespace zerohop::stream
