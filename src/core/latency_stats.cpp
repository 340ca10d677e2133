#include "core/latency_stats.hpp"

#include <algorithm>
#include <cmath>

namespace zerohop {

Percentiles percentiles(std::vector<double> values) {
  Percentiles p;
  p.samples = values.size();
  if (values.empty()) return p;
  std::sort(values.begin(), values.end());
  auto rank = [&](double q) {
    const auto idx = static_cast<std::size_t>(std::ceil(q * static_cast<double>(values.size()))) ;
    return values[std::min(values.size() - 1, idx == 0 ? 0 : idx - 1)];
  };
  p.p50Ms = rank(0.50);
  p.p99Ms = rank(0.99);
  return p;
}

void LatencyHistogram::add(double ms) noexcept {
  for (std::size_t i = 0; i < kLatencyBucketsMs.size(); ++i) {
    if (ms <= kLatencyBucketsMs[i]) ++counts[i];
  }
  ++counts.back();
  sumMs += ms;
}

LatencyStats::LatencyStats(std::size_t window) : window_(window == 0 ? 1 : window) {
  ring_.reserve(window_);
  doneTimes_.reserve(window_);
}

void LatencyStats::record(const StageTimes& times) {
  std::int64_t last = 0;
  for (auto t : times.ns) last = std::max(last, t);
  std::lock_guard lock(mutex_);
  if (times.ns[0] != 0) {
    std::int64_t prev = times.ns[0];
    for (std::size_t i = 1; i < kStageCount; ++i) {
      if (times.ns[i] == 0) continue;
      stageHistogram_[i].add(static_cast<double>(times.ns[i] - prev) / 1e6);
      prev = times.ns[i];
    }
    totalHistogram_.add(static_cast<double>(prev - times.ns[0]) / 1e6);
  }
  if (ring_.size() < window_) {
    ring_.push_back(times);
    doneTimes_.push_back(last);
  } else {
    ring_[next_] = times;
    doneTimes_[next_] = last;
  }
  next_ = (next_ + 1) % window_;
  ++frames_;
}

void LatencyStats::addDrops(std::uint64_t n) {
  std::lock_guard lock(mutex_);
  drops_ += n;
}

LatencySnapshot LatencyStats::snapshot() const {
  std::vector<StageTimes> copy;
  std::vector<std::int64_t> done;
  LatencySnapshot s;
  {
    std::lock_guard lock(mutex_);
    copy = ring_;
    done = doneTimes_;
    s.frames = frames_;
    s.drops = drops_;
    s.stageHistogram = stageHistogram_;
    s.totalHistogram = totalHistogram_;
  }
  std::array<std::vector<double>, kStageCount> per;
  std::vector<double> total;
  for (const auto& t : copy) {
    const std::int64_t capture = t.ns[0];
    if (capture == 0) continue;
    std::int64_t prev = capture;
    std::int64_t last = capture;
    for (std::size_t i = 1; i < kStageCount; ++i) {
      if (t.ns[i] == 0) continue;
      per[i].push_back(static_cast<double>(t.ns[i] - prev) / 1e6);
      prev = t.ns[i];
      last = t.ns[i];
    }
    total.push_back(static_cast<double>(last - capture) / 1e6);
  }
  for (std::size_t i = 0; i < kStageCount; ++i) s.stage[i] = percentiles(std::move(per[i]));
  s.total = percentiles(std::move(total));
  if (done.size() >= 2) {
    auto [mn, mx] = std::minmax_element(done.begin(), done.end());
    if (*mx > *mn) s.fps = static_cast<double>(done.size() - 1) * 1e9 / static_cast<double>(*mx - *mn);
  }
  return s;
}

}  // namespace zerohop
