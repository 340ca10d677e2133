#pragma once
// The loss the Opus in-band FEC is set for, from the worst listener's reported loss, sampled once a
// second. A report reads one short window (transport-cc: ~300 ms, a dozen packets), so random loss of a
// few percent reads 0 in many of them and 8-16 % in others: set from each report alone, the FEC
// switched off and on every second or two. So the reports are smoothed, up faster (30 % of the way per
// report: two thirds of a step in 3 s) than down (10 %: the time constant of ~10 s libwebrtc's Opus
// encoder smooths its loss with), and nobody reporting (no listener) turns it off at once: there is
// nothing to protect. Reports of 5 % random loss (0, 8 or 16 % each) keep it at 4-8 %.
// Thread-safety: pure, reentrant.

#include <algorithm>
#include <cmath>
#include <cstdint>

namespace zerohop::audio {

inline constexpr double kFecLossRise = 0.3;  ///< of the way to a higher report, per report
inline constexpr double kFecLossFall = 0.1;  ///< of the way to a lower report, per report

/// The next smoothed loss (percent) after `smoothed`, given this second's `reported` worst loss
/// (percent; < 0: no listener reports any).
constexpr double nextFecLoss(double smoothed, double reported) noexcept {
  if (reported < 0) return 0;
  return smoothed + (reported > smoothed ? kFecLossRise : kFecLossFall) * (reported - smoothed);
}

/// What the encoder is set for: the smoothed loss rounded, at most `cap` percent.
inline std::uint32_t fecLossPercent(double smoothed, std::uint32_t cap) noexcept {
  return smoothed > 0 ? std::min(static_cast<std::uint32_t>(std::lround(smoothed)), cap) : 0u;
}

}  // namespace zerohop::audio
