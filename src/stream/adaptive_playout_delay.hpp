#pragma once
// AdaptivePlayoutDelay: the playout delay one viewer is asked for (the RTP playout-delay extension),
// raised while its path makes us repair packets slowly (docs/stream.md, "Playout delay").
//
// A lost packet is resent when the viewer's NACK reaches us, so the frame it belongs to arrives one
// round trip late (plus up to a frame, when the lost packet was a frame's last and the loss shows only
// with the next frame's packets). Chromium counts a freeze when a frame comes more than ~150 ms after
// the one before it, and with a playout delay of 0 it shows every frame as soon as it is decoded: on a
// path with 100 ms RTT and 2 % loss that is several freezes a minute, whatever the rate (measured:
// docs/benchmarks-latency.md, "Congestion control"). While the viewer's retransmission requests keep coming
// and its RTT is at least kRepairRttMs, the minimum delay becomes ceil10(kRttFactor x RTT + kMarginMs) (210
// ms at 105 ms RTT), the maximum twice that, so the receiver holds each frame long enough for one
// repair to land; kHoldNs after the last request (or once the RTT falls under kRepairRttMs x kRelease),
// it goes back to the configured delay, except that a configured 0,0 comes back as 10,20 ms
// (kBackMinMs, kBackMaxMs): Firefox ESR stops presenting video (it still decodes) when a stream that had
// a playout delay switches to a minimum of 0, whatever the maximum (260,520 -> 0,0 and -> 0,10: 2 of 2
// runs each, 11-12 fps presented of 30 decoded; -> 10,20: 3 of 3 at 29.4 fps; docs/stream.md; Janus saw
// the same, meetecho/janus-gateway#2981). A stream that starts at 0,0 plays in both browsers. On a LAN or
// loopback (RTT of a few ms) it never moves.
//
// Pure: time comes in with each update (CLOCK_MONOTONIC ns). Thread-safety: thread-bound.

#include <cstdint>

#include "stream/rtp_extension_payloads.hpp"

namespace zerohop::stream {

class AdaptivePlayoutDelay {
 public:
  static constexpr double kRepairRttMs = 60;
  static constexpr double kRelease = 0.8;
  static constexpr double kRttFactor = 1.5;
  static constexpr double kMarginMs = 50;
  static constexpr int kCeilingMs = 1000;
  static constexpr std::int64_t kHoldNs = 20'000'000'000;
  /// What a configured 0,0 comes back as (see above).
  static constexpr int kBackMinMs = kPlayoutDelayUnitMs;
  static constexpr int kBackMaxMs = 2 * kPlayoutDelayUnitMs;

  /// `configured`: what the viewer gets while its path repairs fast (serve's --playout-delay, 0,0 by
  /// default).
  explicit AdaptivePlayoutDelay(PlayoutDelay configured) : configured_(configured), current_(configured) {}

  /// `retransmitted`: the viewer's retransmissions so far (a running count); `rttMs` <= 0: unknown.
  /// Returns the delay to send from now on.
  PlayoutDelay update(std::int64_t nowNs, std::uint64_t retransmitted, double rttMs);
  PlayoutDelay current() const { return current_; }
  /// The minimum is above what it comes back to (covering repairs now).
  bool raised() const { return current_.minMs > back().minMs; }
  /// What a raised delay comes back to: the configured one, kBackMinMs,kBackMaxMs for a configured 0,0.
  PlayoutDelay back() const {
    return configured_.minMs == 0 && configured_.maxMs == 0 ? PlayoutDelay{kBackMinMs, kBackMaxMs} : configured_;
  }

 private:
  PlayoutDelay configured_;
  PlayoutDelay current_;
  std::uint64_t lastRetransmitted_ = 0;
  std::int64_t lastRepairNs_ = 0;
  double rttMs_ = 0;
};

}  // namespace zerohop::stream
