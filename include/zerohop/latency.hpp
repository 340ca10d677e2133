#pragma once
// The latency figures zerohop reports (Pipeline::status(), CameraServer's cameras, /stats): per-stage
// p50/p99 over the last frames, cumulative histograms since start, frame rate and drops. Plain values,
// copied out of the pipeline; what computes them is internal.
// Thread-safety: values; LatencyHistogram::add() is not synchronised.

#include <array>
#include <cstdint>

#include "zerohop/export.h"
#include "zerohop/frame.hpp"

namespace zerohop {

struct Percentiles {
  double p50Ms = 0;
  double p99Ms = 0;
  std::uint64_t samples = 0;
};

/// Upper bounds (ms) of the cumulative latency histogram buckets (+Inf is implicit).
inline constexpr std::array<double, 12> kLatencyBucketsMs{0.25, 0.5, 1, 2, 5, 10, 20, 35, 50, 100, 250, 1000};

/// Cumulative since start (for Prometheus histograms): counts[i] = samples <= kLatencyBucketsMs[i];
/// counts.back() = all samples.
struct ZEROHOP_API LatencyHistogram {
  std::array<std::uint64_t, kLatencyBucketsMs.size() + 1> counts{};
  double sumMs = 0;
  void add(double ms) noexcept;
};

/// One interval between consecutive stages (capture->ingest, ..., encode->send) plus the total.
struct LatencySnapshot {
  std::array<Percentiles, kStageCount> stage{};  ///< stage[i]: time from the previous reached stage to i
  Percentiles total{};                           ///< capture -> last stage reached
  std::array<LatencyHistogram, kStageCount> stageHistogram{};  ///< since start, same intervals as `stage`
  LatencyHistogram totalHistogram{};
  double fps = 0;
  std::uint64_t frames = 0;
  std::uint64_t drops = 0;
};

}  // namespace zerohop
