#pragma once
// The SDP exchange of one webrtcbin, for either role: answer a peer's offer (WHEP: answer()), make an
// offer and take the peer's answer (WHIP: offer() then applyAnswer()); a program with its own signalling
// (zerohop/webrtc_session.hpp) uses the same calls. Each step runs one of webrtcbin's action signals
// ("set-remote-description", "create-answer", ...) with a GstPromise whose change function wakes the
// waiting thread; the wait is on one condition (the promise replied, or abort()) up to the step's
// deadline, never a poll. After the local description is set it waits (on the same condition) for ICE
// gathering to complete, so the SDP returned carries every candidate.
//
//   caller (HTTP thread)            webrtcbin's thread
//   answer(offer) ---- set-remote-description(promise) ---> replies -> onChange: done, notify
//          <-- wakes ---------------------------------------/
//          ---- create-answer -> set-local-description ---> ...       gathering: noteGatheringComplete()
//   returns the local SDP (with its candidates) <---------------------/
//
// The promise's change function holds the wait state through a shared_ptr, so a reply that comes after
// its waiter gave up (timeout, abort) touches nothing freed.
// Thread-safety: thread-safe; the negotiation calls block and run one at a time (the owner's rule).
// Borrows `webrtc` and `pipeline` from its owner, who keeps both alive longer than this object.

#include <gst/gst.h>

#include <chrono>
#include <memory>
#include <string>

#include "stream/gst_handles.hpp"

namespace zerohop::stream {

class WebrtcNegotiation {
 public:
  /// `label` names the session in log lines. `stunOrTurn`: ICE servers were given, so a gathering that
  /// does not complete in time is answered with the candidates found so far instead of failing.
  WebrtcNegotiation(GstElement* webrtc, GstElement* pipeline, std::string label, bool stunOrTurn);
  WebrtcNegotiation(const WebrtcNegotiation&) = delete;
  WebrtcNegotiation& operator=(const WebrtcNegotiation&) = delete;

  /// Applies the offer, creates the answer, waits for ICE gathering and returns the answer SDP with its
  /// candidates. `mediaIndex` >= 0: only that m-section (and `audioIndex`'s, when >= 0) reaches
  /// webrtcbin, the others are answered rejected (sdp_sections.hpp). Throws Error: kInvalidArgument when
  /// webrtcbin rejects the offer, kTimeout when a step exceeds `timeout`, kUnavailable when aborted.
  std::string answer(const std::string& offerSdp, int mediaIndex, std::chrono::milliseconds timeout,
                     int audioIndex = -1);
  /// Creates the offer, waits for ICE gathering and returns it with its candidates; errors as answer().
  std::string offer(std::chrono::milliseconds timeout);
  /// Applies the remote answer to our offer. Throws Error(kInvalidArgument) when webrtcbin rejects it.
  void applyAnswer(const std::string& answerSdp, std::chrono::milliseconds timeout);

  /// Wakes a negotiation in progress so it throws kUnavailable; later ones throw at once.
  void abort();
  /// webrtcbin's ice-gathering-state became "complete" (the owner's notify handler).
  void noteGatheringComplete();

 private:
  struct State;
  struct Call;
  using Deadline = std::chrono::steady_clock::time_point;
  /// Runs one webrtcbin action signal and waits (bounded, abortable) for its promise.
  GstPromisePtr call(const char* signal, gpointer arg, Deadline deadline, std::chrono::milliseconds timeout);
  void setRemote(GstWebRTCSDPType type, const std::string& sdp, Deadline deadline, std::chrono::milliseconds timeout);
  /// "create-offer" or "create-answer", set it locally without the RTX SSRC's a=ssrc lines (they would
  /// be interned as names for good: sdp_repair_ssrc.hpp), wait for ICE gathering; the local SDP with
  /// those lines back in.
  std::string describeLocally(const char* create, Deadline deadline, std::chrono::milliseconds timeout);

  GstElement* const webrtc_;
  GstElement* const pipeline_;
  const std::string label_;
  const bool stunOrTurn_;
  const std::shared_ptr<State> state_;
};

}  // namespace zerohop::stream
