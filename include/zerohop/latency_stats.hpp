#pragma once
// Rolling per-stage latency statistics (p50/p99 over the last N frames), frame rate and drops.
// Thread-safety: thread-safe; record() from the pipeline thread, snapshot() from any thread.

#include <array>
#include <cstdint>
#include <mutex>
#include <vector>

#include "zerohop/frame.hpp"

namespace zerohop {

struct Percentiles {
  double p50Ms = 0;
  double p99Ms = 0;
  std::uint64_t samples = 0;
};

/// One interval between consecutive stages (capture->ingest, ..., encode->send) plus the total.
struct LatencySnapshot {
  std::array<Percentiles, kStageCount> stage{};  ///< stage[i]: time from the previous reached stage to i
  Percentiles total{};                           ///< capture -> last stage reached
  double fps = 0;
  std::uint64_t frames = 0;
  std::uint64_t drops = 0;
};

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
};

/// Median and 99th percentile of `values` (ms), nearest-rank. Exposed for tests and benchmarks.
Percentiles percentiles(std::vector<double> values);

}  // namespace zerohop
