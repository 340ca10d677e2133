#include "stream/webrtc_negotiation.hpp"

#include <condition_variable>
#include <mutex>
#include <string>
#include <utility>

#include "stream/glib_handoff.hpp"
#include "stream/sdp_repair_ssrc.hpp"
#include "stream/sdp_sections.hpp"
#include "stream/webrtc_warmup.hpp"
#include "zerohop/error.hpp"
#include "zerohop/log.hpp"

namespace zerohop::stream {
namespace {

// A description of `type` from SDP text; empty when the text is not SDP (the caller says whose it was).
SessionDescriptionPtr descriptionFromText(GstWebRTCSDPType type, const std::string& text) {
  GstSDPMessage* raw = nullptr;
  const GstSDPResult parsed = gst_sdp_message_new_from_text(text.c_str(), &raw);
  GstSdpMessagePtr sdp(raw);
  if (parsed != GST_SDP_OK || !sdp) return SessionDescriptionPtr();
  return SessionDescriptionPtr(gst_webrtc_session_description_new(type, sdp.release()));
}

}  // namespace

// The one condition every wait of this negotiation is on: a promise replied, gathering completed, or
// abort(). Shared with the promises' change functions.
struct WebrtcNegotiation::State {
  std::mutex mutex;
  std::condition_variable cv;
  bool gatheringComplete = false;
  bool aborted = false;
};

// One action signal's promise: `done` once webrtcbin replied or interrupted it.
struct WebrtcNegotiation::Call {
  std::shared_ptr<State> state;
  bool done = false;  // under state->mutex

  using Ref = GlibHandoff<std::shared_ptr<Call>>;  // travels to webrtcbin's thread (glib_handoff.hpp)

  static void onChange(GstPromise*, gpointer data) {
    Call& c = *static_cast<Ref*>(data)->get();
    std::lock_guard lock(c.state->mutex);
    c.done = true;
    c.state->cv.notify_all();
  }
  static void destroy(gpointer data) { delete static_cast<Ref*>(data); }
};

WebrtcNegotiation::WebrtcNegotiation(GstElement* webrtc, GstElement* pipeline, std::string label, bool stunOrTurn)
    : webrtc_(webrtc),
      pipeline_(pipeline),
      label_(std::move(label)),
      stunOrTurn_(stunOrTurn),
      state_(std::make_shared<State>()) {}

void WebrtcNegotiation::abort() {
  std::lock_guard lock(state_->mutex);
  state_->aborted = true;
  state_->cv.notify_all();
}

void WebrtcNegotiation::noteGatheringComplete() {
  std::lock_guard lock(state_->mutex);
  state_->gatheringComplete = true;
  state_->cv.notify_all();
}

GstPromisePtr WebrtcNegotiation::call(const char* signal, gpointer arg, Deadline deadline,
                                      std::chrono::milliseconds timeout) {
  auto c = std::make_shared<Call>();
  c->state = state_;
  GstPromisePtr promise(gst_promise_new_with_change_func(Call::onChange, new Call::Ref(c), Call::destroy));
  g_signal_emit_by_name(webrtc_, signal, arg, promise.get());
  {
    std::unique_lock lock(state_->mutex);
    const bool woken = state_->cv.wait_until(lock, deadline, [&] { return c->done || state_->aborted; });
    if (!c->done) {
      const bool aborted = woken;  // woken without a reply: abort()
      lock.unlock();
      gst_promise_interrupt(promise.get());
      if (aborted) throw Error(Errc::kUnavailable, std::string("webrtcbin ") + signal + ": the server is shutting down");
      throw Error(Errc::kTimeout, std::string("webrtcbin ") + signal + " did not complete within " +
                                      std::to_string(timeout.count()) + " ms");
    }
  }
  if (gst_promise_wait(promise.get()) != GST_PROMISE_RESULT_REPLIED) {
    throw Error(Errc::kUnavailable, std::string("webrtcbin ") + signal + " was interrupted");
  }
  const GstStructure* reply = gst_promise_get_reply(promise.get());
  if (reply && gst_structure_has_field(reply, "error")) {
    GError* raw = nullptr;
    gst_structure_get(reply, "error", G_TYPE_ERROR, &raw, nullptr);
    GErrorPtr err(raw);
    throw Error(Errc::kInvalidArgument,
                std::string("webrtcbin ") + signal + " failed: " + (err ? err->message : "unknown error"));
  }
  return promise;
}

void WebrtcNegotiation::setRemote(GstWebRTCSDPType type, const std::string& sdp, Deadline deadline,
                                  std::chrono::milliseconds timeout) {
  const SessionDescriptionPtr desc = descriptionFromText(type, sdp);
  if (!desc) {
    throw Error(Errc::kInvalidArgument, std::string("gst_sdp_message_new_from_text failed: the ") +
                                            (type == GST_WEBRTC_SDP_TYPE_OFFER ? "offer" : "answer") +
                                            " is not SDP");
  }
  call("set-remote-description", desc.get(), deadline, timeout);
}

std::string WebrtcNegotiation::describeLocally(const char* create, Deadline deadline,
                                               std::chrono::milliseconds timeout) {
  const bool offer = std::string(create) == "create-offer";
  GstPromisePtr promise = call(create, nullptr, deadline, timeout);
  GstWebRTCSessionDescription* rawDesc = nullptr;
  const GstStructure* reply = gst_promise_get_reply(promise.get());
  if (!reply ||
      !gst_structure_get(reply, offer ? "offer" : "answer", GST_TYPE_WEBRTC_SESSION_DESCRIPTION, &rawDesc,
                         nullptr) ||
      !rawDesc) {
    throw Error(Errc::kUnsupported, std::string("webrtcbin ") + create + " returned no description");
  }
  const SessionDescriptionPtr made(rawDesc);
  // Set without the per-answer RTX SSRC's a=ssrc lines, which webrtcbin would intern as names for good;
  // they go back into the text the peer receives (sdp_repair_ssrc.hpp).
  GCharPtr madeText(gst_sdp_message_as_text(made->sdp));
  const RepairSsrcLines repair = takeRepairSsrcLines(madeText.get());
  const SessionDescriptionPtr desc = descriptionFromText(made->type, repair.kept);
  if (!desc) throw Error(Errc::kInternal, "gst_sdp_message_new_from_text failed on webrtcbin's own description");
  call("set-local-description", desc.get(), deadline, timeout);

  {
    // Read before taking the lock: nothing calls into webrtcbin while holding it (its thread may be
    // replying to a promise under its own lock, and the reply takes ours).
    GstWebRTCICEGatheringState gathering{};
    g_object_get(webrtc_, "ice-gathering-state", &gathering, nullptr);
    std::unique_lock lock(state_->mutex);
    if (gathering == GST_WEBRTC_ICE_GATHERING_STATE_COMPLETE) state_->gatheringComplete = true;
    if (!state_->cv.wait_until(lock, deadline, [this] { return state_->gatheringComplete || state_->aborted; })) {
      // A STUN/TURN server that does not answer keeps gathering open for its retransmissions (~25 s
      // in libnice): answer with the candidates found so far, so the direct path still works.
      if (!stunOrTurn_) {
        throw Error(Errc::kTimeout, "ICE gathering did not complete within " + std::to_string(timeout.count()) +
                                        " ms (no usable network interface?)");
      }
      log::warn("stream: viewer ", label_, ": ICE gathering incomplete after ", timeout.count(),
                " ms: a STUN/TURN server of the ICE servers did not answer; answering with the candidates found "
                "so far");
    } else if (!state_->gatheringComplete) {
      throw Error(Errc::kUnavailable, "negotiation aborted: the server is shutting down");
    }
  }

  // webrtcbin added its RTP session and transport: redistribute the pipeline latency.
  if (pipeline_) gst_bin_recalculate_latency(GST_BIN(pipeline_));

  GstWebRTCSessionDescription* rawLocal = nullptr;
  g_object_get(webrtc_, "local-description", &rawLocal, nullptr);
  SessionDescriptionPtr local(rawLocal);
  if (!local || !local->sdp) throw Error(Errc::kInternal, "webrtcbin has no local description after negotiation");
  GCharPtr text(gst_sdp_message_as_text(local->sdp));
  return withRepairSsrcLines(text.get(), repair);
}

// The process's DTLS certificate is made once, in the first dtlsdec (webrtc_warmup.hpp); a session
// negotiating meanwhile would block inside webrtcbin until it exists. That wait (0.3-1 s, over 3 s under
// ASan on a busy box) is not webrtcbin hanging, so it happens first, before the timeout starts.
std::string WebrtcNegotiation::answer(const std::string& offerSdp, int mediaIndex, std::chrono::milliseconds timeout,
                                      int audioIndex) {
  waitForStartedWarmUp();
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  if (mediaIndex < 0) {
    setRemote(GST_WEBRTC_SDP_TYPE_OFFER, offerSdp, deadline, timeout);
    return describeLocally("create-answer", deadline, timeout);
  }
  // webrtcbin sees the chosen video section (and the chosen audio one, which we send to) only: it would
  // accept an m=application (data channels, an SCTP association per viewer). The others are answered
  // rejected.
  const OfferCut cut = keepSections(offerSdp, mediaIndex, audioIndex);
  if (!cut.rejectedKinds.empty()) {
    std::string kinds;
    for (const std::string& k : cut.rejectedKinds) kinds += (kinds.empty() ? "m=" : ", m=") + k;
    log::info("stream: viewer ", label_, ": rejected (port 0) what this server does not send or take: ", kinds);
  }
  setRemote(GST_WEBRTC_SDP_TYPE_OFFER, cut.offer, deadline, timeout);
  return withRejectedSections(describeLocally("create-answer", deadline, timeout), cut);
}

std::string WebrtcNegotiation::offer(std::chrono::milliseconds timeout) {
  waitForStartedWarmUp();  // as in answer()
  return describeLocally("create-offer", std::chrono::steady_clock::now() + timeout, timeout);
}

void WebrtcNegotiation::applyAnswer(const std::string& answerSdp, std::chrono::milliseconds timeout) {
  setRemote(GST_WEBRTC_SDP_TYPE_ANSWER, answerSdp, std::chrono::steady_clock::now() + timeout, timeout);
}

}  // namespace zerohop::stream
