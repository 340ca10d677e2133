#include "stream/dtls_certificate.hpp"

#include "stream/gst_handles.hpp"

namespace zerohop::stream {

DtlsCertificatePrewarm::DtlsCertificatePrewarm()
    : thread_([] {
        // Loading the plugins a session's pipeline is made of is the rest of the first session's extra wait.
        for (const char* factory : {"webrtcbin", "rtpbin", "rtph264pay", "nicesrc", "srtpenc", "dtlssrtpenc"}) {
          GstPtr<GstElement> e(gst_element_factory_make(factory, nullptr));
          if (e) gst_object_ref_sink(e.get());
        }
        // dtlssrtpdec's "pem" is the process-wide certificate; reading it makes it when there is none yet.
        GstPtr<GstElement> dec(gst_element_factory_make("dtlssrtpdec", nullptr));
        if (!dec) return;
        gst_object_ref_sink(dec.get());
        gchar* pem = nullptr;
        g_object_get(dec.get(), "pem", &pem, nullptr);
        g_free(pem);
      }) {}

DtlsCertificatePrewarm::~DtlsCertificatePrewarm() {
  if (thread_.joinable()) thread_.join();
}

}  // namespace zerohop::stream
