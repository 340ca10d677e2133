#pragma once
// Internal: the a=extmap lines (RFC 8285) of one m-section of a viewer's offer, kept when they name an
// extension we send. A line we cannot read, an id outside 1-14/16-255, an id or URI offered twice, or a
// direction other than sendrecv/recvonly is passed over: no extension is ever a reason to refuse an
// offer. Used by the video (video_offer.cpp) and audio (audio_offer.cpp) choices.
// Thread-safety: a value type, thread-bound.

#include <string>
#include <string_view>
#include <vector>

#include "stream/rtp_extension_payloads.hpp"

namespace zerohop::stream {

class OfferedExtensions {
 public:
  /// Keeps only extensions whose URI is one of `wanted`.
  explicit OfferedExtensions(std::vector<std::string> wanted) : wanted_(std::move(wanted)) {}
  /// Reads one "a=extmap:" value: "<id>[/<direction>] <uri> [<attributes>]".
  void add(std::string_view value);
  /// The extensions kept, with the offer's ids, in the offer's order.
  const std::vector<RtpExtension>& kept() const noexcept { return kept_; }

 private:
  std::vector<std::string> wanted_;
  std::vector<RtpExtension> kept_;
  std::vector<int> idsSeen_;  // every id a line used, to pass over duplicates
};

}  // namespace zerohop::stream
