#pragma once
// The built-in test camera: renders the PatternFrames picture at a fixed rate into its own buffer pool.
// Capture time is the frame's deadline on CLOCK_MONOTONIC (when a real sensor would have finished
// the frame); rendering cost is reported as the ingest stage. Frames the consumer was too late for are
// skipped and counted as drops, as a real camera with full queues would. Each frame carries the A/V
// marker block (core/av_marker_picture.hpp): white in the frame whose exposure (the period ending at its
// capture time) holds a marker instant (core/av_marker.hpp, where the test tone clicks), else black.
// Thread-safety: thread-bound, except counters() (thread-safe).

#include <atomic>
#include <memory>

#include "pattern_frames.hpp"
#include "zerohop/source.hpp"

namespace zerohop {

class PatternCamera final : public FrameSource {
 public:
  PatternCamera(const SourceSpec& spec, const SourceOptions& options);
  SourceInfo info() const override { return info_; }
  std::optional<FrameLease> next(std::chrono::milliseconds timeout) override;
  SourceCounters counters() const override;

 private:
  SourceInfo info_;
  BufferPool pool_;
  PatternFrames pattern_;
  std::int64_t periodNs_;
  std::int64_t startNs_ = 0;
  std::uint64_t index_ = 0;
  std::atomic<std::uint64_t> frames_{0};
  std::atomic<std::uint64_t> drops_{0};
};

}  // namespace zerohop
