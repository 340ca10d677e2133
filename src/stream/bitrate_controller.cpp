#include "stream/bitrate_controller.hpp"

#include <algorithm>
#include <cmath>

namespace zerohop::stream {
namespace {

double clampTo(double kbps, const BitrateLimits& limits) {
  return std::clamp(kbps, static_cast<double>(limits.minKbps), static_cast<double>(limits.maxKbps));
}

BitrateLimits ordered(BitrateLimits limits) {
  if (limits.maxKbps == 0) limits.maxKbps = 1;
  limits.minKbps = std::min(limits.minKbps, limits.maxKbps);
  return limits;
}

// The multiplicative increase over `stepNs` (at most kMaxStepNs): (1 + rate)^seconds.
double grown(double kbps, std::int64_t stepNs, double ratePerSecond) {
  const double seconds = static_cast<double>(std::clamp<std::int64_t>(stepNs, 0, BitrateController::kMaxStepNs)) / 1e9;
  return kbps * std::pow(1.0 + ratePerSecond, seconds);
}

}  // namespace

double BitrateController::windowPackets(double sendKbps) {
  return std::max(1.0, sendKbps * kPacketsPerWindowPerKbps);
}

double BitrateController::increasePerSecond(std::int64_t sinceDecreaseNs) {
  if (sinceDecreaseNs < kFastAfterNs) return kIncreasePerSecond;
  const double pastFast = static_cast<double>(sinceDecreaseNs - kFastAfterNs) / 1e9;
  return std::min(kMaxIncreasePerSecond, kFastIncreasePerSecond + kIncreaseGrowthPerSecond * pastFast);
}

BitrateController::BitrateController(BitrateLimits limits, std::uint32_t startKbps)
    : limits_(ordered(limits)), estimate_(clampTo(startKbps, limits_)) {}

void BitrateController::setLimits(BitrateLimits limits) {
  limits_ = ordered(limits);
  estimate_ = clampTo(estimate_, limits_);
}

std::uint32_t BitrateController::update(const CongestionFeedback& f) {
  const std::int64_t step = lastUpdateNs_ == 0 ? 0 : f.nowNs - lastUpdateNs_;
  lastUpdateNs_ = f.nowNs;
  if (lastDecreaseNs_ == 0) lastDecreaseNs_ = f.nowNs;
  decision_ = Decision::kHold;
  if (!f.fresh) return estimateKbps();

  const double windowLoss = std::clamp(f.lossFraction.value_or(0.0), 0.0, 1.0);
  double loss = windowLoss;
  // About how many packets the transport-cc window held: one packet more or less lost moves its loss and
  // its received/sent ratio by 1/packets (1/15 at 400 kb/s), which random loss does all the time.
  const double packets = windowPackets(f.sendKbps.value_or(estimate_));
  if (f.lossFromTransportCc) {
    // Smoothed over windows, each weighed by its packets (half from kFullWeightPackets up): at a few
    // hundred kb/s 2 % random loss puts single windows past 10 %; a real burst still shows in a window or two.
    const double weight = std::clamp(packets / kFullWeightPackets * 0.5, kLeastLossWeight, 0.5);
    lossSmoothed_ = lossSmoothed_ ? (1 - weight) * *lossSmoothed_ + weight * loss : loss;
    loss = *lossSmoothed_;
  }
  if (f.rttMs) {
    while (!minRttWindow_.empty() && minRttWindow_.back().second >= *f.rttMs) minRttWindow_.pop_back();
    minRttWindow_.emplace_back(f.nowNs, *f.rttMs);
    while (minRttWindow_.front().first < f.nowNs - kMinRttWindowNs) minRttWindow_.pop_front();
    lastRttMs_ = *f.rttMs;
  }
  // Only a report that just came says the queue is full now (a stale RTT from a past burst does not).
  const bool queueFull =
      loss >= kLossLow && f.rttMs && *f.rttMs > minRttWindow_.front().second + kQueueDelayMs;
  bool queueing = false;
  const bool transportRates = f.receiveKbps && f.sendKbps && *f.sendKbps > 0;
  if (transportRates) {
    // A packet or two lost at random is not a queue: the shortfall they explain is excused (two packets
    // for the one-window rule, one for the two-window rule); more loss counts, as a full queue's does.
    const double ratio = *f.receiveKbps / *f.sendKbps;
    const double once = ratio / (1 - std::min({windowLoss, 2 / packets, 0.5}));  // never more than half
    const double twice = ratio / (1 - std::min({windowLoss, 1 / packets, 0.5}));
    queueing = once < kOveruseRatio || (twice < kOveruseRatioTwice && lastWindowSlow_);
    lastWindowSlow_ = twice < kOveruseRatioTwice;
  }
  // The mean delta of delta is the window's delay growth over its packet count: the same queue growth
  // reads smaller the more packets the window holds, so the threshold scales with the rate.
  const double perPacketMs = kQueueGrowthMs * kQueueGrowthAtKbps / std::max(100.0, f.sendKbps.value_or(estimate_));
  if (f.deltaOfDeltaMs && *f.deltaOfDeltaMs > perPacketMs) queueing = true;
  const bool congested = loss > kLossHigh || queueing || queueFull;

  auto decreaseTo = [&](double next) {
    estimate_ = clampTo(std::min(next, estimate_), limits_);
    decision_ = Decision::kDecrease;
    const double rttMs = std::clamp(lastRttMs_.value_or(100.0), 0.0, 1000.0);
    frozenUntilNs_ = f.nowNs + kSettleNs + static_cast<std::int64_t>(rttMs * 1e6);
    lastDecreaseNs_ = f.nowNs;
  };
  if (f.nowNs < frozenUntilNs_) {
    // Settling after a decrease. Only the path's own rate can lower the estimate again: while the path
    // drops or queues, what the viewer received is what it carries, whatever we sent (a decrease from
    // a window that still held the rate before a step lands above the path).
    if (congested && f.receiveKbps && kBackoff * *f.receiveKbps < kRedecreaseBelow * estimate_) {
      decreaseTo(kBackoff * *f.receiveKbps);
    }
    return estimateKbps();
  }
  if (congested) {
    // What got through is what the path carries now: go below it so its queue drains. Without that
    // measure, GCC's loss-based step. Not both: feedback about the queue of the rate before a decrease
    // (and the retransmissions it asked for) would compound them far under the path's rate.
    decreaseTo(f.receiveKbps ? kBackoff * *f.receiveKbps : estimate_ * (1.0 - 0.5 * std::max(loss, kLossHigh)));
  } else if (loss >= kLossLow && !transportRates) {
    decision_ = Decision::kHold;  // random loss, as far as the receiver reports tell
  } else {
    // Loss under 2 %, or 2..10 % while transport-cc shows no queue on the path (random loss: a radio
    // link, a lossy relay): probe up, faster and faster once no decrease was needed for a while.
    double next = grown(estimate_, step, increasePerSecond(f.nowNs - lastDecreaseNs_));
    if (f.boundByThroughput && (f.receiveKbps || f.sentLastSecondKbps)) {
      const double bound =
          f.receiveKbps
              ? kThroughputHeadroom * std::min(*f.receiveKbps, f.sentLastSecondKbps.value_or(*f.receiveKbps))
              : kReportHeadroom * *f.sentLastSecondKbps;
      next = std::min(next, std::max(estimate_, bound + kThroughputHeadroomKbps));
    }
    estimate_ = clampTo(next, limits_);
    decision_ = Decision::kIncrease;
  }
  return estimateKbps();
}

void EncodeTarget::setLimits(BitrateLimits limits) {
  limits_ = ordered(limits);
  target_ = clampTo(target_, limits_);
}

std::uint32_t EncodeTarget::update(std::int64_t nowNs, const std::vector<std::uint32_t>& viewerEstimates) {
  const std::int64_t step = lastUpdateNs_ == 0 ? 0 : nowNs - lastUpdateNs_;
  lastUpdateNs_ = nowNs;
  double weakest = limits_.maxKbps;
  for (const std::uint32_t e : viewerEstimates) weakest = std::min<double>(weakest, e);
  // Down at once (the weakest viewer is losing packets now), up no faster than one viewer may rise.
  target_ = clampTo(weakest < target_ ? weakest : std::min(weakest, grown(target_, step, kRisePerSecond)), limits_);
  return targetKbps();
}

double creditedReportLoss(double fractionLost, std::uint64_t nacked, std::uint64_t expected) {
  if (expected == 0) return nacked > 0 ? fractionLost : 0.0;
  return std::min(fractionLost, static_cast<double>(nacked) / static_cast<double>(expected));
}

}  // namespace zerohop::stream
