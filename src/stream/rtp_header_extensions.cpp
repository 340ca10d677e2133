// Which RTP header extensions the sender writes, and the element for each (rtp_header_extensions.hpp).
#include "stream/rtp_header_extensions.hpp"

#include <mutex>
#include <string>

#include "stream/gst_handles.hpp"
#include "zerohop/error.hpp"

namespace zerohop::stream {
namespace {

GstRTPHeaderExtensionFlags oneOrTwoByte(GstRTPHeaderExtension*) {
  return static_cast<GstRTPHeaderExtensionFlags>(GST_RTP_HEADER_EXTENSION_ONE_BYTE | GST_RTP_HEADER_EXTENSION_TWO_BYTE);
}

}  // namespace

void initHeaderExtensionClass(GstRTPHeaderExtensionClass* klass, const HeaderExtensionClassSpec& spec) {
  klass->get_supported_flags = oneOrTwoByte;
  klass->get_max_size = spec.maxSize;
  klass->write = spec.write;
  klass->read = spec.read;
  gst_element_class_set_static_metadata(GST_ELEMENT_CLASS(klass), spec.longName, "Network/Extension/RTPHeader",
                                        spec.description, "zerohop");
  gst_rtp_header_extension_class_set_uri(klass, std::string(spec.uri).c_str());
}

void registerHeaderExtension(const char* factoryName, GType type) {
  ensureGstInit();  // the callers register each type once
  gst_element_register(nullptr, factoryName, GST_RANK_NONE, type);
}

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
