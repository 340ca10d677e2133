#pragma once
// Reads a WHEP viewer's SDP offer and picks the codec and payload type we can honestly send: H.264
// whenever the offer has a usable one, else VP8 when the stream can make it (docs/stream.md, "Codec choice").
// Pure logic on a string: no GStreamer, no sockets, so it runs (and is fuzzed) anywhere.
//
// What we accept: a video m-line (port != 0, direction recvonly or sendrecv) offering H264/90000
// with packetization-mode=1 and profile_idc 0x42 (Baseline family). Our encoder produces
// Constrained Baseline, so in order of preference:
//   1. profile-level-id 42e01f exactly (Constrained Baseline, level 3.1: what browsers offer);
//   2. another Constrained Baseline id (42e0xx, 42c0xx, 4240xx: constraint_set1 = 1);
//   3. plain Baseline 4200xx (every Baseline decoder decodes Constrained Baseline).
// When the stream's level is known (SendableCodecs::h264Level, read from the stream's SPS), an id whose
// level covers it comes before one whose level does not, then the order above. Ties keep the offerer's order. An offer without such H.264 (Firefox ESR without OpenH264: VP8, VP9,
// AV1; Main/High only; packetization-mode 0 only) gets VP8 (the offer's first VP8 payload type) when
// the stream can send it, else it is refused with a text naming what the offer had and what we send. The level in the id is the viewer's receive capability (RFC 6184 §8.1); when
// no offered id covers the stream's level the choice still serves (browsers decode higher levels) and says
// so: VideoChoice::levelCovered is false.
// RTP header extensions: of that m-line's a=extmap lines (RFC 8285), those the sender writes
// (sentExtensionUris: playout-delay, abs-capture-time, transport-wide-cc) are kept with the offer's
// ids, so the answer can accept them as offered. A line we cannot read, an id outside 1-14/16-255, an
// id or URI offered twice, or a direction other than sendrecv/recvonly is passed over (no extension
// is ever a reason to refuse an offer).
// An a=fingerprint that is not "<hash function> <hex bytes>" of RFC 8122 (the bytes as many as the hash
// makes) makes the offer malformed: it would be taken now and fail the DTLS handshake later.
// Thread-safety: reentrant.

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "stream/audio_offer.hpp"
#include "stream/rtp_extension_payloads.hpp"
#include "zerohop/codec.hpp"

namespace zerohop::stream {

struct VideoChoice {
  int mediaIndex = -1;         ///< index of the chosen m-line in the offer
  int payloadType = -1;        ///< the offer's H.264 payload type we answer with
  int rtxPayloadType = -1;     ///< the offer's rtx payload type for it (apt=payloadType), -1 if none
  std::string profileLevelId;  ///< as offered, lower case, e.g. "42e01f"
  std::vector<RtpExtension> extensions;  ///< offered extensions we send, in the offer's order
  bool transportCcFeedback = false;      ///< a=rtcp-fb:<payloadType or *> transport-cc was offered
  bool nackFeedback = false;  ///< a=rtcp-fb:<payloadType or *> nack was offered: the viewer asks for what it misses
  Codec codec = Codec::kH264;          ///< kH264 or kVP8 (then profileLevelId is empty)
  bool levelAsymmetryAllowed = false;  ///< the chosen H.264 format's fmtp has level-asymmetry-allowed=1
  int offeredLevel = 0;   ///< level_idc of profileLevelId (9 = level 1b), 0 for VP8
  int streamLevel = 0;    ///< level_idc the stream sends (SendableCodecs::h264Level), 0 = not known
  bool levelCovered = true;  ///< offeredLevel >= streamLevel (true while streamLevel is not known)
  /// The Opus track sent beside the video (chooseAudio(), when the stream has sound); nullopt: video only.
  std::optional<AudioChoice> audio;
  /// Non-empty (a WHIP offer with simulcast, whip_publisher.hpp): the video goes as these RFC 8851 rid
  /// layers of one m-section, layer i carrying rung i of the ladder (simulcast_sdp.hpp names them).
  std::vector<std::string> simulcastRids;

  /// False for a viewer of the sound alone (chooseAudioOnly(): mediaIndex -1, codec kOpus, audio set).
  bool hasVideo() const { return mediaIndex >= 0; }
};

/// What the stream can send besides H.264: VP8 when its pipeline can run the second encode.
struct SendableCodecs {
  bool vp8 = false;
  std::string vp8WhyNot;  ///< when !vp8 and non-empty: why (it goes into the refusal's text)
  int h264Level = 0;      ///< level_idc of the stream's H.264 (its SPS), 0 = not known yet
};

/// The level of an H.264 profile-level-id ("42e01f" -> 31) as a comparable level_idc: level 1b
/// (level_idc 11 with constraint_set3 in Baseline, or level_idc 9) is 9. 0 for an id that is not 6 hex digits.
int profileLevelIdLevel(std::string_view profileLevelId);

/// "3.1" for 31, "1b" for 9.
std::string levelName(int levelIdc);

/// Throws Error(kInvalidArgument) when `sdp` is not a well-formed SDP offer (the message says which
/// line and why), Error(kUnsupported) when it is well formed but offers nothing `sendable` allows: the
/// message lists the video codecs the offer has and what the server sends.
VideoChoice chooseVideo(std::string_view sdp, const SendableCodecs& sendable);

/// An offer that asks for sound alone: no video section that receives (none, or each one rejected or
/// sendonly/inactive) and an audio section with Opus (chooseAudio()). The choice has no video (hasVideo()
/// false, codec kOpus) and its audio set; nullopt when the offer has a receiving video section (chooseVideo()
/// answers it) or no Opus to receive. Only a stream with sound can answer it. Throws as chooseVideo() for
/// a malformed offer.
std::optional<VideoChoice> chooseAudioOnly(std::string_view sdp);

/// chooseVideo() for a sender of H.264 only (WHIP answers, the standalone WebRtcSession).
VideoChoice chooseH264(std::string_view sdp);

/// Checks the answer a WHIP endpoint gave to our offer of H.264 with `payloadType`: it must be SDP as an
/// offer is (a=fingerprint well formed included) and have an open (port != 0) video section that
/// receives (recvonly or sendrecv) that payload type. Throws Error(kProtocol) saying what it has instead.
void checkPublishAnswer(std::string_view answer, int payloadType);

}  // namespace zerohop::stream
