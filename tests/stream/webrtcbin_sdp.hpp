#pragma once
// A webrtcbin's side of an offer/answer exchange without trickle, as the test viewers (the loopback
// harness's in-process viewer and the standalone WHEP receivers) run it. GStreamer only.
// Thread-safety: reentrant; each call blocks on webrtcbin's promises.

#include <gst/gst.h>
#include <gst/sdp/sdp.h>
#ifndef GST_USE_UNSTABLE_API
#define GST_USE_UNSTABLE_API
#endif
#include <gst/webrtc/webrtc.h>

#include <chrono>
#include <cstdio>
#include <string>
#include <thread>

namespace zerohop::webrtcbin_sdp {

/// Makes `webrtc`'s offer, sets it as its local description and waits, bounded by `gathering`, for ICE
/// gathering to complete (on loopback it does within milliseconds; the bound is for a starved box, where an
/// offer cut short may lack its candidates and the session then never connects: that is said on stderr);
/// the local description then (the offer with its candidates), or "" when webrtcbin made none.
inline std::string localOffer(GstElement* webrtc,
                              std::chrono::milliseconds gathering = std::chrono::seconds(10)) {
  GstPromise* p = gst_promise_new();
  g_signal_emit_by_name(webrtc, "create-offer", nullptr, p);
  gst_promise_wait(p);
  GstWebRTCSessionDescription* offer = nullptr;
  if (const GstStructure* reply = gst_promise_get_reply(p))
    gst_structure_get(reply, "offer", GST_TYPE_WEBRTC_SESSION_DESCRIPTION, &offer, nullptr);
  gst_promise_unref(p);
  if (!offer) return {};
  p = gst_promise_new();
  g_signal_emit_by_name(webrtc, "set-local-description", offer, p);
  gst_promise_wait(p);
  gst_promise_unref(p);
  gst_webrtc_session_description_free(offer);
  const auto deadline = std::chrono::steady_clock::now() + gathering;
  for (;;) {
    GstWebRTCICEGatheringState s{};
    g_object_get(webrtc, "ice-gathering-state", &s, nullptr);
    if (s == GST_WEBRTC_ICE_GATHERING_STATE_COMPLETE) break;
    if (std::chrono::steady_clock::now() > deadline) {
      std::fprintf(stderr,
                   "webrtcbin_sdp: ICE gathering not complete after %lld ms (state %d): the offer may lack "
                   "candidates\n",
                   static_cast<long long>(gathering.count()), static_cast<int>(s));
      break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  GstWebRTCSessionDescription* local = nullptr;
  g_object_get(webrtc, "local-description", &local, nullptr);
  if (!local) return {};
  gchar* text = gst_sdp_message_as_text(local->sdp);
  std::string sdp(text);
  g_free(text);
  gst_webrtc_session_description_free(local);
  return sdp;
}

/// Sets `answer` as `webrtc`'s remote description; false when it is not SDP or webrtcbin refused it.
inline bool applyAnswer(GstElement* webrtc, const std::string& answer) {
  GstSDPMessage* sdp = nullptr;
  if (gst_sdp_message_new_from_text(answer.c_str(), &sdp) != GST_SDP_OK) return false;
  GstWebRTCSessionDescription* desc = gst_webrtc_session_description_new(GST_WEBRTC_SDP_TYPE_ANSWER, sdp);
  GstPromise* p = gst_promise_new();
  g_signal_emit_by_name(webrtc, "set-remote-description", desc, p);
  gst_promise_wait(p);
  const GstStructure* reply = gst_promise_get_reply(p);
  const bool ok = !(reply && gst_structure_has_field(reply, "error"));
  gst_promise_unref(p);
  gst_webrtc_session_description_free(desc);
  return ok;
}

}  // namespace zerohop::webrtcbin_sdp
