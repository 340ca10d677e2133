#pragma once
// A V4L2 source that outlives its camera being unplugged: it reopens the same spec with bounded
// back-off and resumes, so a serving pipeline keeps its viewers through an unplug/replug.
// Thread-safety: thread-bound (the capture thread), except counters() and requestKeyframe() (thread-safe).
// Owns the current session's source; leases of older sessions keep their own queues alive.

#include <mutex>

#include "zerohop/capture.hpp"
#include "zerohop/error.hpp"

namespace zerohop::capture_detail {

class ReconnectingSource final : public FrameSource {
 public:
  /// Opens the camera now; throws like openV4l2Source() if it cannot.
  ReconnectingSource(const SourceSpec& spec, const SourceOptions& options, ReconnectPolicy policy);
  SourceInfo info() const override;
  std::optional<FrameLease> next(std::chrono::milliseconds timeout) override;
  SourceCounters counters() const override;
  /// Forwarded to the current session; false while the camera is gone.
  bool requestKeyframe() override;

 private:
  /// Drops the lost session (its counters are kept) and schedules the first retry.
  void lose(const Error& why);
  /// One reopen attempt if it is due; true when a session is open again.
  bool tryReopen();

  SourceSpec spec_;
  SourceOptions options_;
  ReconnectPolicy policy_;
  std::chrono::milliseconds delay_;
  std::chrono::steady_clock::time_point nextAttempt_{};
  mutable std::mutex mutex_;  // guards session_ swaps against counters()/requestKeyframe(), past_ and info_
  std::unique_ptr<FrameSource> session_;
  SourceCounters past_;
  SourceInfo info_;
};

}  // namespace zerohop::capture_detail
