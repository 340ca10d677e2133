#pragma once
// Congestion control for the shared encode (docs/stream.md, "Congestion control").
//
// BitrateController: one viewer's bandwidth estimate from its feedback, GCC's loss-based controller
// (draft-ietf-rmcat-gcc-02 §6) with a throughput signal from transport-cc feedback:
//   loss < 2 %, the link delivering what we send: increase 8 %/s (multiplicative), 15 %/s once
//   kFastAfterNs have passed since the last decrease, and from there 10 points faster each second up to
//   50 %/s (the path has room: a link that got faster, or a limit lifted while the estimate sat at the
//   minimum, is found in seconds, not tens of seconds; a decrease starts over at 8 %/s);
//   loss 2..10 %: hold (random loss) when only receiver reports tell; with transport-cc showing no
//   queue (below), increase as for loss < 2 % (a lossy link is not a full one); a receiver report that just
//   came with the round trip kQueueDelayMs past the least one of the last kMinRttWindowNs: the loss comes
//   from a full queue, not from a lossy radio link: decrease as for overuse (a round trip that grew for
//   good, a new route, is the baseline once the window has passed: it is not a queue to drain);
//   loss > 10 %: decrease to estimate x (1 - 0.5 loss); transport-cc's loss (a ~300 ms window) is
//   smoothed over windows first, each weighed by the packets it held (a dozen at 300 kb/s, where one
//   lost packet is 8 %), the receiver report's (about a second) taken as it is;
//   the viewer received less than kOveruseRatio of what we sent in the feedback window, or less than
//   kOveruseRatioTwice in two windows in a row (a queue is building on its path, transport-cc only; it
//   is seen before the queue overflows; the shortfall of up to two, and one, packets lost is excused:
//   random loss, not a queue): decrease;
//   transport-cc's mean delta of delta (arrival gap - send gap) over a window above kQueueGrowthMs x
//   kQueueGrowthAtKbps / the send rate: a queue grows on the path (the delay signal; ~0.01 ms on an
//   idle path): decrease;
//   a decrease goes to kBackoff x the rate the viewer received at when transport-cc measured it (the
//   path's rate now, so its queue drains), else by the loss-based step (at least 5 %);
//   an increase stops at 1.5 x what the viewer received + 10 kb/s where the feedback says so
//   (boundByThroughput: GCC's bound on an estimate the encoder does not fill; the receive rate taken no
//   higher than what we sent over the last second); with receiver reports only, at 1.2 x what we sent
//   + 10 kb/s.
// A decrease is followed by no other change for one RTT + kSettle, so the next decision sees feedback
// about the new rate; only a path still congested that received less than kRedecreaseBelow x the
// estimate lowers it again meanwhile, to kBackoff x received (the first decrease after a step can come
// from a window that held the rate before it). No feedback since the last update: hold (never
// increase blindly).
// EncodeTarget: the one encode's bitrate: the lowest estimate of the viewers that give feedback,
// reached at once when it falls and no faster than a viewer's estimate may rise (a weak viewer leaving
// does not jump the rate), within [min, max].
// Both are pure: time comes in with the feedback (CLOCK_MONOTONIC ns). Thread-safety: thread-bound
// (the caller serialises); reentrant (no shared state).

#include <cstdint>
#include <deque>
#include <optional>
#include <utility>
#include <vector>

namespace zerohop::stream {

struct BitrateLimits {
  std::uint32_t minKbps = 300;
  std::uint32_t maxKbps = 2500;
};

/// What one viewer's RTCP said since the previous update.
struct CongestionFeedback {
  std::int64_t nowNs = 0;
  /// False: nothing new came from the viewer (the other fields are ignored, the estimate holds).
  bool fresh = false;
  std::optional<double> lossFraction;  ///< 0..1: transport-cc's last window, else the receiver report's fraction lost
  bool lossFromTransportCc = false;    ///< lossFraction is transport-cc's (~300 ms window: smoothed)
  std::optional<double> rttMs;         ///< from a receiver report (LSR/DLSR) that came since the previous update
  std::optional<double> receiveKbps;   ///< transport-cc: the rate the viewer received our packets at, last window
  std::optional<double> sendKbps;      ///< transport-cc: the rate we sent the same packets at
  std::optional<double> deltaOfDeltaMs;  ///< transport-cc: mean (arrival gap - send gap) of the window's packets
  /// An increase stops at kThroughputHeadroom x receiveKbps + kThroughputHeadroomKbps (GCC's bound, draft
  /// §5.5; libwebrtc's AIMD rate control has the same): when the encoder lags behind the estimate (VP8's
  /// rate control takes seconds), the estimate does not run ahead of what the path was shown to carry, and
  /// the encoder's catching up does not overshoot the link. For a viewer whose encode can reach its estimate
  /// (no ladder, VP8, the ladder's top rung); not on a lower rung, whose encode is capped below the next
  /// rung's floor and where moving up is itself the probe.
  bool boundByThroughput = false;
  /// The rate we sent this viewer's media at over about the last second (the server's own count). The
  /// throughput bound takes transport-cc's receive rate no higher than this: a window of a few packets
  /// (Firefox's feedback windows held ~3) reads a burst's rate, and 1.5 x one such window let the estimate
  /// of a VP8 encode sending ~850 kb/s reach 1,484 behind a 1 Mbit/s link. With receiver reports only (no
  /// receive rate), this alone, with kReportHeadroom (a report with loss under kLossLow says the viewer
  /// received it).
  std::optional<double> sentLastSecondKbps;
};

/// The loss a receiver report may claim against the shared encode when no transport-cc tells (one viewer's
/// claim otherwise pulls every viewer's picture down: a hostile viewer claiming 50 % loss drove the encode to
/// --min-bitrate in 3-9 s): its fraction lost, but no more than the packets it asked to be resent (RTCP
/// NACK, repeats counted) over the packets the report's interval covered (`expected`: its extended highest
/// sequence number less the previous report's). A viewer that negotiated NACK asks for what it misses
/// (browsers do, within a round trip), so loss its NACKs do not show is not believed. `expected` 0 (the
/// first report): believed only when it NACKed anything. Pure.
double creditedReportLoss(double fractionLost, std::uint64_t nacked, std::uint64_t expected);

class BitrateController {
 public:
  static constexpr double kIncreasePerSecond = 0.08;
  static constexpr double kFastIncreasePerSecond = 0.15;
  static constexpr std::int64_t kFastAfterNs = 4'000'000'000;
  /// Past kFastAfterNs the increase per second grows by this each second, up to kMaxIncreasePerSecond.
  static constexpr double kIncreaseGrowthPerSecond = 0.10;
  static constexpr double kMaxIncreasePerSecond = 0.50;
  /// Mean delta of delta over which a queue grows, at kQueueGrowthAtKbps (scaled by kQueueGrowthAtKbps /
  /// the window's send rate: the mean is the window's delay growth over its packet count).
  static constexpr double kQueueGrowthMs = 0.25;
  static constexpr double kQueueGrowthAtKbps = 1000;
  static constexpr double kLossLow = 0.02;
  static constexpr double kLossHigh = 0.10;
  /// Received / sent in one transport-cc window under this: a queue builds (1.00 +- 0.01 on an idle path).
  static constexpr double kOveruseRatio = 0.85;
  /// ... or under this in two windows in a row.
  static constexpr double kOveruseRatioTwice = 0.92;
  static constexpr double kBackoff = 0.85;
  /// While settling after a decrease: lower again only to kBackoff x received under this x the estimate.
  static constexpr double kRedecreaseBelow = 0.9;
  static constexpr double kQueueDelayMs = 50;
  /// The least round trip is taken over this window (BBR's min_rtt filter is 10 s, too).
  static constexpr std::int64_t kMinRttWindowNs = 10'000'000'000;
  static constexpr std::int64_t kSettleNs = 300'000'000;
  /// Packets in one transport-cc window per kb/s sent: GStreamer's twcc-stats window is 300 ms, and
  /// packets of at most 1000 bytes (H.264 at a few hundred kb/s: ~850) make 0.0375 per kb/s.
  static constexpr double kPacketsPerWindowPerKbps = 0.0375;
  /// A transport-cc window of this many packets or more has half the weight in the smoothed loss
  /// (800 kb/s); fewer, proportionally less, but at least kLeastLossWeight.
  static constexpr double kFullWeightPackets = 30;
  static constexpr double kLeastLossWeight = 0.1;
  /// CongestionFeedback::boundByThroughput: an increase goes no higher than this x what the viewer received,
  /// plus kThroughputHeadroomKbps (never lowering the estimate).
  static constexpr double kThroughputHeadroom = 1.5;
  static constexpr double kThroughputHeadroomKbps = 10;
  /// The bound from CongestionFeedback::sentLastSecondKbps alone (receiver reports only): tighter, since a
  /// report comes about once a second and tells of a full queue only by its loss (no delay signal), so an
  /// overshoot is seen later and costs more.
  static constexpr double kReportHeadroom = 1.2;
  /// Longest step an increase is computed over: a late update does not jump the rate.
  static constexpr std::int64_t kMaxStepNs = 1'000'000'000;

  enum class Decision { kIncrease, kHold, kDecrease };

  /// Starts at `startKbps` (clamped to the limits).
  BitrateController(BitrateLimits limits, std::uint32_t startKbps);

  /// About how many packets a transport-cc window of `sendKbps` holds (at least 1).
  static double windowPackets(double sendKbps);
  /// The multiplicative increase per second `sinceDecreaseNs` after the last decrease (or the first update).
  static double increasePerSecond(std::int64_t sinceDecreaseNs);

  /// Applies one update; returns the new estimate in kb/s.
  std::uint32_t update(const CongestionFeedback& feedback);
  std::uint32_t estimateKbps() const { return static_cast<std::uint32_t>(estimate_ + 0.5); }
  Decision lastDecision() const { return decision_; }
  void setLimits(BitrateLimits limits);

 private:
  BitrateLimits limits_;
  double estimate_;
  Decision decision_ = Decision::kHold;
  std::int64_t lastUpdateNs_ = 0;
  std::int64_t frozenUntilNs_ = 0;  // after a decrease: hold until then
  std::int64_t lastDecreaseNs_ = 0;  // or the first update
  // The path without a queue, as far as the last kMinRttWindowNs showed it: (time, RTT) samples with
  // rising RTTs, the front the least (a monotonic queue: each sample goes in and out once).
  std::deque<std::pair<std::int64_t, double>> minRttWindow_;
  std::optional<double> lastRttMs_;  // the last report's, for the settling time
  std::optional<double> lossSmoothed_;  // transport-cc loss, smoothed over windows
  bool lastWindowSlow_ = false;      // the previous transport-cc window was under kOveruseRatioTwice
};

class EncodeTarget {
 public:
  /// How fast the target may rise (a viewer's fastest increase).
  static constexpr double kRisePerSecond = BitrateController::kMaxIncreasePerSecond;
  explicit EncodeTarget(BitrateLimits limits) : limits_(limits), target_(limits.maxKbps) {}
  /// `viewerEstimates`: the estimates of the viewers that count (connected, feedback seen); none: the
  /// target rises towards the maximum. Returns the new target in kb/s.
  std::uint32_t update(std::int64_t nowNs, const std::vector<std::uint32_t>& viewerEstimates);
  std::uint32_t targetKbps() const { return static_cast<std::uint32_t>(target_ + 0.5); }
  const BitrateLimits& limits() const { return limits_; }
  void setLimits(BitrateLimits limits);

 private:
  BitrateLimits limits_;
  double target_;
  std::int64_t lastUpdateNs_ = 0;
};

}  // namespace zerohop::stream
