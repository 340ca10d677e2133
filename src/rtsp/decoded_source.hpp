#pragma once
// An H.264 or H.265 source's frames decoded into I420 on the CPU (H264CpuDecoder), as a FrameSource of its
// own: `rtsp://...?format=i420`, and every H.265 camera (WebRTC viewers take no H.265 as it is). The pipeline then treats the camera as a raw one: its frames go to the frame
// share and are encoded for viewers (H.264 with x264, VP8 with libvpx). Each frame keeps the H.264 frame's
// sequence and times (capture from the camera's clock, ingest at arrival); the decode lies between ingest
// and the pipeline's next stage. A unit the decoder refuses (packets lost on the way) is counted as a drop
// and logged once a second at most; the decoder recovers at the next IDR.
// Thread-safety: thread-bound (one thread calls next()), except counters() and requestKeyframe()
// (thread-safe); its FrameLeases (each a reference on a decoded picture) may be released on any thread
// and may outlive it.

#include <atomic>
#include <memory>

#include "rtsp/h264_cpu_decoder.hpp"
#include "zerohop/source.hpp"

namespace zerohop::rtsp {

class DecodedH264Source final : public FrameSource {
 public:
  /// Takes the camera's source: its units H.264 (its info().format kH264) or, with `codec` kH265, H.265.
  explicit DecodedH264Source(std::unique_ptr<FrameSource> h264, VideoCodec codec = VideoCodec::kH264);
  ~DecodedH264Source() override;
  SourceInfo info() const override { return info_; }
  std::optional<FrameLease> next(std::chrono::milliseconds timeout) override;
  SourceCounters counters() const override;
  bool requestKeyframe() override { return h264_->requestKeyframe(); }

 private:
  class Pictures;
  std::unique_ptr<FrameSource> h264_;
  H264CpuDecoder decoder_;
  std::shared_ptr<Pictures> pictures_;
  SourceInfo info_;
  std::int64_t lastErrorLogNs_ = 0;
  std::atomic<std::uint64_t> decodeDrops_{0};
};

}  // namespace zerohop::rtsp
