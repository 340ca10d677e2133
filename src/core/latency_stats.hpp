#pragma once
// Rolling per-stage latency statistics (p50/p99 over the last N frames), frame rate and drops: what
// fills the LatencySnapshot (zerohop/latency.hpp) the pipeline reports.
// Thread-safety: thread-safe; record() from the pipeline thread, snapshot() from any thread.

#include <cstdint>
#include <mutex>
#include <vector>

#include "zerohop/frame.hpp"
#include "zerohop/latency.hpp"

namespace zerohop {

class LatencyStats {
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

/// Median and 99th percentile of `values` (ms), nearest-rank.
Percentiles percentiles(std::vector<double> values);

}  // namespace zerohop
