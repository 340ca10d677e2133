#pragma once
// Which of a viewer's retransmission requests (RTCP NACK -> webrtcbin's rtprtxsend) are worth serving
// (docs/stream.md, "Congestion control"). Without this, every NACKed sequence number is resent each
// time it is asked for: behind a full bottleneck queue the receiver asks again before the first copy
// could arrive, the copies are lost in the same queue, and retransmissions grow to several times the
// media rate (measured: 3 Mbit/s sent for 2 s into a 1 Mbit/s link, 7 Mbit/s with 100 ms RTT), which
// keeps the queue full long after the encoder is under the link. The rules (libwebrtc's sender has the
// first two kinds: its packet history resends a packet at most once per RTT, its rate limiter caps
// retransmissions at the estimate; the 25 % share is ours, so media and repairs stay near the link):
//   a packet is resent at most once per 0.9 x max(RTT, kMinRttNs) (the receiver asks again about once
//   per RTT, Chromium every 100 ms when it knows no RTT; 10 % slack for their jitter);
//   retransmissions over the last kWindowNs stay within kShare x the viewer's estimate;
//   a packet that is no longer in the history (kHistory packets, the newest) is not resent;
//   nor one sent before the last keyframe that went out: the receiver decodes from that keyframe on
//   (after a loss burst the server sends one rather than repairing the burst packet by packet);
//   on a short round trip (a known RTT under kTwiceBelowRttNs) a repair goes out twice, where the
//   budget holds both: Chromium asks again for a lost repair only 100 ms later (a receiver alone knows
//   no RTT), so one lost copy costs the picture a freeze (~150 ms late) where the link itself would have
//   repaired it in one RTT; two copies make that a loss of both (0.09 % at 3 % random loss). On a long
//   round trip the playout delay covers a second repair instead (adaptive_playout_delay.hpp).
// Pure: time comes in with each call (CLOCK_MONOTONIC ns). Thread-safety: thread-bound (the caller
// serialises: the send path and the RTCP thread both call it).

#include <array>
#include <cstddef>
#include <cstdint>
#include <deque>

namespace zerohop::stream {

/// True when an RTP payload of rtpvp8pay (RFC 7741) is the first packet of a VP8 keyframe: the payload
/// descriptor says start of partition 0 (S = 1, PID = 0), and the VP8 payload header after it has P = 0.
/// False for anything shorter or malformed. Pure.
bool isVp8KeyframeStart(const std::uint8_t* payload, std::size_t size);

class RetransmissionBudget {
 public:
  static constexpr std::size_t kHistory = 1024;  ///< > rtprtxsend's 500 packets (webrtcbin sets it)
  static constexpr std::int64_t kMinRttNs = 100'000'000;
  static constexpr std::int64_t kWindowNs = 500'000'000;
  static constexpr double kShare = 0.25;
  static constexpr std::int64_t kTwiceBelowRttNs = 60'000'000;

  /// An original packet (not a retransmission) went out; `keyframeStart`: the first of a keyframe.
  void onSent(std::uint16_t seq, std::size_t bytes, std::int64_t nowNs, bool keyframeStart = false);
  /// The copies of `seq` to resend now: 0 (pass over this request), 1, or 2 (a short round trip;
  /// both counted in the budget's bytes, the request once in allowed()).
  std::uint32_t allow(std::uint16_t seq, std::int64_t nowNs);
  /// The viewer's estimate (kb/s) and RTT (ms, 0 = unknown) the rules use.
  void setPath(std::uint32_t estimateKbps, double rttMs);

  std::uint64_t allowed() const { return allowed_; }
  std::uint64_t refused() const { return refused_; }
  std::uint64_t allowedBytes() const { return allowedBytes_; }
  std::uint64_t keyframes() const { return keyframes_; }
  std::uint64_t twice() const { return twice_; }  ///< requests served with two copies

 private:
  struct Packet {
    bool known = false;
    std::uint16_t seq = 0;
    std::uint32_t bytes = 0;
    std::int64_t lastResentNs = 0;  // 0 = never resent
  };
  std::array<Packet, kHistory> history_{};
  std::deque<std::pair<std::int64_t, std::uint32_t>> recent_;  // (when, bytes) resent in the window
  std::uint64_t recentBytes_ = 0;
  bool sawKeyframe_ = false;
  std::uint16_t keyframeSeq_ = 0;  // the first packet of the last keyframe sent
  std::uint32_t estimateKbps_ = 0;  // 0 = not known yet: no budget limit
  double rttMs_ = 0;
  std::uint64_t allowed_ = 0, refused_ = 0, allowedBytes_ = 0, keyframes_ = 0, twice_ = 0;
};

}  // namespace zerohop::stream
