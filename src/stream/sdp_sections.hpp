#pragma once
// An answer accepts only what serve sends: the one video m-section chosen from the offer
// (video_offer.hpp) and, when the stream has sound, the one audio m-section chosen beside it
// (audio_offer.hpp). Every other section a peer offers (m=application for data channels, audio, a
// second video) is rejected in the answer with port 0 (RFC 8829 §5.3.1), and webrtcbin never sees it,
// so a viewer cannot make serve build an SCTP association, open data channels or receive its audio
// (docs/reliability.md, "Hostile peers").
// Pure logic on a string: no GStreamer, so it runs anywhere.
//
//   offer --keepOnlySection()--> OfferCut::offer (session lines + the kept m-section) --webrtcbin-->
//   answer with one m-section --withRejectedSections()--> answer with every offered m-section, in
//   order, the others rejected
// Thread-safety: reentrant.

#include <string>
#include <string_view>
#include <vector>

namespace zerohop::stream {

struct OfferCut {
  /// The session part and the kept m-section, byte for byte, except that an `a=group:BUNDLE` line
  /// names the kept section's mid only (or is left out when it did not name it).
  std::string offer;
  /// The rejected answer sections ("m=<kind> 0 <proto> <formats>", c=, a=mid) of the m-sections before
  /// the first kept one, between the two kept ones (when two are kept) and after the last, in offer
  /// order, each ending with CRLF.
  std::vector<std::string> before, between, after;
  /// "application", "audio", ... of the rejected sections, in offer order (for the log line).
  std::vector<std::string> rejectedKinds;
};

/// Splits `offer` around its m-section number `keepIndex` (0-based, as VideoChoice::mediaIndex).
/// Throws Error(kInvalidArgument) when the offer has no such section or the kept one has no a=mid
/// (WebRTC needs one in every m-section: RFC 8829 §5.2.1; the section is found by it in the answer).
OfferCut keepOnlySection(std::string_view offer, int keepIndex);

/// As keepOnlySection() for two sections (video and audio, either order); `second` < 0: only `first`.
/// The BUNDLE group names the kept sections' mids, in the group's order.
OfferCut keepSections(std::string_view offer, int first, int second);

/// `answer` (webrtcbin's answer to OfferCut::offer: one m-section per kept one, in offer order) with the
/// rejected sections put around and between its m-sections, so it answers every m-section of the original offer in order.
std::string withRejectedSections(std::string_view answer, const OfferCut& cut);

}  // namespace zerohop::stream
