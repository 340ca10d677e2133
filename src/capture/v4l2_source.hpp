#pragma once
// A V4L2 camera as a FrameSource: negotiates the nearest mode, streams from a CaptureQueue and
// turns each good buffer into a FrameLease. Rejected buffers (V4L2_BUF_FLAG_ERROR, empty, short,
// MJPEG failing the SOI/EOI check) are re-queued at once and counted as errors; sequence gaps are
// counted as drops; no frame for 3 frame intervals counts one stall (until frames come back).
// Thread-safety: thread-bound (the capture thread), except counters() and requestKeyframe() (thread-safe).

#include <atomic>
#include <memory>

#include "capture/capture_queue.hpp"
#include "zerohop/source.hpp"

namespace zerohop::capture_detail {

class V4l2Source final : public FrameSource {
 public:
  V4l2Source(const SourceSpec& spec, const SourceOptions& options);
  ~V4l2Source() override;
  SourceInfo info() const override { return info_; }
  std::optional<FrameLease> next(std::chrono::milliseconds timeout) override;
  SourceCounters counters() const override;
  /// VIDIOC_S_CTRL(V4L2_CID_MPEG_VIDEO_FORCE_KEY_FRAME) where the camera offers it (probed at open).
  bool requestKeyframe() override;

 private:
  /// nullptr if the buffer is good, else why it is rejected.
  const char* defect(const DequeuedBuffer& buf) const;
  void countStall(std::int64_t now);

  SourceInfo info_;
  ImageLayout layout_;
  std::shared_ptr<CaptureQueue> queue_;
  std::int64_t periodNs_ = 0;
  bool haveSequence_ = false;
  std::uint32_t lastSequence_ = 0;
  std::uint64_t sequence_ = 0;  // the driver's sequence widened to 64 bits
  std::int64_t lastFrameNs_ = 0;
  bool stalled_ = false;
  std::atomic<std::uint64_t> frames_{0};
  std::atomic<std::uint64_t> drops_{0};
  std::atomic<std::uint64_t> errors_{0};
  std::atomic<std::uint64_t> stalls_{0};
  bool keyframeControl_ = false;  // the camera offers V4L2_CID_MPEG_VIDEO_FORCE_KEY_FRAME
  std::atomic<bool> keyframeFailureLogged_{false};
};

}  // namespace zerohop::capture_detail
