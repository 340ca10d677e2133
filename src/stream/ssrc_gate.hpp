#pragma once
// What a viewer may send into serve's RTP stack, checked on the clear-text bytes before SRTP decryption
// (docs/reliability.md, "Hostile peers"). GStreamer's srtpdec makes a libsrtp stream for every new SSRC it
// sees, before it can tell whether the packet authenticates, and rtpsession a source: a viewer sending
// junk with a new random SSRC per packet took serve from 83 to 322 MB in 10 s, never given back. serve
// only sends media, so a viewer has no business sending RTP at all, and its RTCP comes from a handful of
// sender SSRCs (a browser uses one or two). The gate lets through every RTCP packet whose sender SSRC is
// one of the first kMaxRtcpSenders it saw, drops every RTP packet and every other RTCP packet, and counts
// what it dropped. STUN (kept by libnice, never seen here), DTLS and anything else pass untouched.
// Pure logic on bytes: no GStreamer, so it runs (and is tested) anywhere; ViewerSession runs it in a pad
// probe on the source pad of webrtcbin's nicesrc.
// Thread-safety: classifyPacket is reentrant; SsrcGate is thread-safe (admit() on the receiving
// streaming thread, the counters read from any thread).

#include <array>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <mutex>
#include <vector>

namespace zerohop::stream {

/// What a datagram on a WebRTC transport is, by its first byte (RFC 7983) and, for RTP and RTCP, its
/// second (RFC 5761: RTCP packet types 192-223).
enum class PacketKind {
  kStun,   ///< first byte 0-3
  kDtls,   ///< 20-63
  kRtp,    ///< 128-191, second byte outside 192-223; at least a 12-byte header
  kRtcp,   ///< 128-191, second byte 192-223; at least an 8-byte header (with the sender SSRC)
  kOther,  ///< anything else (ZRTP, TURN channel data, empty) and RTP/RTCP too short for its header
};

struct PacketClass {
  PacketKind kind = PacketKind::kOther;
  std::uint32_t ssrc = 0;  ///< kRtp: the SSRC; kRtcp: the first packet's sender SSRC; 0 otherwise
};

/// Classifies one datagram (SRTP and SRTCP keep these header fields in clear text).
PacketClass classifyPacket(const std::uint8_t* data, std::size_t size);

class SsrcGate {
 public:
  /// RTCP sender SSRCs let through: the first ones seen. A browser reports from one or two.
  static constexpr std::size_t kMaxRtcpSenders = 4;

  /// True when the datagram may go on to the DTLS/SRTP decoder; false (and counted) when it is RTP, or
  /// RTCP from a sender SSRC past the first kMaxRtcpSenders, or RTP/RTCP too short for its header.
  bool admit(const std::uint8_t* data, std::size_t size);

  std::uint64_t dropped() const { return dropped_.load(std::memory_order_relaxed); }
  /// The RTCP sender SSRCs admitted so far, in the order first seen (at most kMaxRtcpSenders).
  std::vector<std::uint32_t> rtcpSenders() const;

 private:
  mutable std::mutex mutex_;
  std::array<std::uint32_t, kMaxRtcpSenders> senders_{};  // under mutex_
  std::size_t senderCount_ = 0;                           // under mutex_
  std::atomic<std::uint64_t> dropped_{0};
};

}  // namespace zerohop::stream
