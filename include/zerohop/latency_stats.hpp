#pragma once
// Rolling per-stage latency statistics (p50/p99 over the last N frames), frame rate and drops.
// Thread-safety: thread-safe; record() from the pipeline thread, snapshot() from any thread.

#include <array>
#include <cstdint>
#include <mutex>
#include <vector>

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

class ZEROHOP_API LatencyStats {
 public:
  explicit LatencyStats(std::size_t window = 300);
  /// Records the stage times of one finished frame.
  void record(const StageTimes& times);
  void addDrops(std::uint64_t n);
  LatencySnapshot snapshot() const;

 private:
  mutable std::mutex mutex_;
  std::size_t window_;
  std::size_t next_ = 0;
  std::vector<StageTimes> ring_;
  std::vector<std::int64_t> doneTimes_;  // for fps over the window
  std::uint64_t frames_ = 0;
  std::uint64_t drops_ = 0;
  std::array<LatencyHistogram, kStageCount> stageHistogram_{};
  LatencyHistogram totalHistogram_{};
};

/// Median and 99th percentile of `values` (ms), nearest-rank. Exposed for tests and benchmarks.
ZEROHOP_API Percentiles percentiles(std::vector<double> values);

}  // namespace zerohop
