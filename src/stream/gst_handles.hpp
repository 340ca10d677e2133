#pragma once
// Move-only owners for the GLib/GStreamer handles the stream stage uses (RAII: one owner per handle).
// Each deleter tolerates null and never throws.
// Thread-safety: as std::unique_ptr (one owner; the objects themselves are refcounted and thread-safe).

#include <gst/gst.h>
#include <gst/sdp/sdp.h>
#define GST_USE_UNSTABLE_API
#include <gst/webrtc/webrtc.h>

#include <memory>
#include <string>

namespace zerohop::stream {

struct GstObjectUnref {
  void operator()(gpointer p) const noexcept {
    if (p) gst_object_unref(p);
  }
};
template <class T>
using GstPtr = std::unique_ptr<T, GstObjectUnref>;

struct GObjectUnref {
  void operator()(gpointer p) const noexcept {
    if (p) g_object_unref(p);
  }
};
template <class T>
using GObjectPtr = std::unique_ptr<T, GObjectUnref>;

struct GstCapsUnref {
  void operator()(GstCaps* p) const noexcept {
    if (p) gst_caps_unref(p);
  }
};
using GstCapsPtr = std::unique_ptr<GstCaps, GstCapsUnref>;

struct GstPromiseUnref {
  void operator()(GstPromise* p) const noexcept {
    if (p) gst_promise_unref(p);
  }
};
using GstPromisePtr = std::unique_ptr<GstPromise, GstPromiseUnref>;

struct GstSdpMessageFree {
  void operator()(GstSDPMessage* p) const noexcept {
    if (p) gst_sdp_message_free(p);
  }
};
using GstSdpMessagePtr = std::unique_ptr<GstSDPMessage, GstSdpMessageFree>;

struct SessionDescriptionFree {
  void operator()(GstWebRTCSessionDescription* p) const noexcept {
    if (p) gst_webrtc_session_description_free(p);
  }
};
using SessionDescriptionPtr = std::unique_ptr<GstWebRTCSessionDescription, SessionDescriptionFree>;

struct GFree {
  void operator()(gpointer p) const noexcept { g_free(p); }
};
using GCharPtr = std::unique_ptr<gchar, GFree>;

struct GErrorFree {
  void operator()(GError* p) const noexcept {
    if (p) g_error_free(p);
  }
};
using GErrorPtr = std::unique_ptr<GError, GErrorFree>;

/// gst_init once per process (thread-safe).
void ensureGstInit();

}  // namespace zerohop::stream
