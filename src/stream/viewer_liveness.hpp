#pragma once
// Whether a WebRTC viewer is still there, from what its peer connection and its RTCP say.
// A viewer that vanishes without a word (killed browser, pulled cable) is found by goneReason(): ICE/peer
// connection "disconnected" for kDisconnectGrace, or RTCP silence: no report from the viewer for four
// times the longest gap it has shown between reports, at least kRtcpSilence and at most kRtcpSilenceMax.
// The floor covers one regular report interval of an RFC 4585 (AVPF) receiver such as GStreamer's
// webrtcbin: it opens with a burst of reports 0.5 s apart, then reports every T_rr_interval, randomised
// to 2.5-7.5 s, so the gaps seen first say nothing about the next one (a 5 s floor ended such viewers 6 s
// after they joined). Browsers report about every second, so they are found 10 s after they vanish.
// libnice's own checks take 25-30 s.
// Only the timeout of an SSRC the viewer's reports came from ends a session (isViewerSsrc): rtpsession
// also times out SSRCs of its own making.
// Pure: no GStreamer; time comes in with each call (CLOCK_MONOTONIC ns). Thread-safety: thread-safe.

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <mutex>
#include <string>
#include <vector>

namespace zerohop::stream {

class ViewerLiveness {
 public:
  /// ICE or the peer connection "disconnected" this long (without coming back) ends the session.
  static constexpr std::chrono::seconds kDisconnectGrace{5};
  /// RTCP silence that ends a connected session: 4x the viewer's longest report gap, within these
  /// (the floor: an AVPF receiver's longest regular interval, 7.5 s, plus a margin; see above).
  static constexpr std::chrono::seconds kRtcpSilence{10};
  static constexpr std::chrono::seconds kRtcpSilenceMax{20};
  /// The viewer SSRCs remembered (a browser reports from one or two).
  static constexpr std::size_t kMaxViewerSsrcs = 8;

  /// The peer connection became connected at `nowNs` (the first time counts). False when it had been before.
  bool noteConnected(std::int64_t nowNs);
  /// ICE or the peer connection went "disconnected" (true) or came back (false). True when this starts a
  /// disconnection (it was not disconnected before).
  bool noteDisconnected(bool disconnected, std::int64_t nowNs);
  /// An RTCP packet from the viewer's SSRC `ssrc` (rtpbin's on-ssrc-active) at `nowNs`.
  void noteReport(std::uint32_t ssrc, std::int64_t nowNs);

  /// The SSRCs the viewer's reports came from so far, first seen first (at most kMaxViewerSsrcs).
  std::vector<std::uint32_t> viewerSsrcs() const;
  bool isViewerSsrc(std::uint32_t ssrc) const;
  /// CLOCK_MONOTONIC ns of the first connection; 0 = not yet.
  std::int64_t connectedNs() const;

  /// Why a viewer should be considered gone at `nowNs`, or "" while it looks alive: disconnected for
  /// longer than kDisconnectGrace, or (once connected) RTCP silent for longer than allowed (see above).
  std::string goneReason(std::int64_t nowNs) const;

 private:
  mutable std::mutex mutex_;
  std::vector<std::uint32_t> viewerSsrcs_;
  std::int64_t connectedNs_ = 0;  // 0 = never
  std::int64_t lastRtcpNs_ = 0;   // 0 = none yet
  std::int64_t longestRtcpGapNs_ = 0;
  std::int64_t disconnectedSinceNs_ = 0;  // 0 = not disconnected now
};

}  // namespace zerohop::stream
