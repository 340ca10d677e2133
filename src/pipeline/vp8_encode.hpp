#pragma once
// The second encode, for WHEP viewers whose offer has no usable H.264 (Firefox ESR: VP8/VP9/AV1):
// libvpx VP8 at the H.264 encode's size, rate, bitrate and keyframe interval, on a thread of its own,
// fed an I420 copy of the host frame the H.264 encode took (FrameProcessor::lastHostFrame: I420 on the
// CPU path, the NV12 host copy on the GPU path, converted by Vp8Input). It runs only
// while a sink wants VP8: the encode thread copies frames to it only then; the VP8 thread opens libvpx on
// the first such frame (its first frame is a keyframe) and closes it within 100 ms of a frame no sink
// wanted VP8 for.
// A keyframe request from any viewer forces one here too while it runs. Congestion control's VP8
// target (setTargetKbps) is applied before the next frame, without a keyframe; a new encoder opens at it.
// Overflow: one frame waits at most; a newer one replaces it (live video drops the oldest), so the H.264
// encode never waits on VP8 (the copy costs ~0.2 ms at 720p; the GPU path's download is its own cost,
// docs/stream.md).
// Thread-safety: offer() from the encode thread only; status() from any thread; `deliver` is called on
// the VP8 thread. Ownership: the pipeline owns it and stops it (stop()) before its sinks go.

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>

#include "core/bounded_queue.hpp"
#include "core/latency_stats.hpp"
#include "vp8_input.hpp"
#include "zerohop/buffer_pool.hpp"
#include "zerohop/encoder.hpp"
#include "zerohop/pipeline.hpp"

namespace zerohop {

class Vp8Encode {
 public:
  /// `config`: the H.264 encode's settings (size, fps, bitrate, keyframe interval and colour are kept).
  /// `deliver`: hands a VP8 unit to the sinks that want it (called on the VP8 thread).
  Vp8Encode(EncoderConfig config, std::function<void(const EncodedUnitPtr&)> deliver);
  ~Vp8Encode() { stop(); }
  Vp8Encode(const Vp8Encode&) = delete;
  Vp8Encode& operator=(const Vp8Encode&) = delete;

  /// One frame of the encode thread: `wanted` = some sink wants VP8 now; `frame` = the host frame the
  /// H.264 encode took, I420 or NV12 (null: none). Writes it as I420 for the VP8 thread when wanted.
  /// Never throws.
  void offer(const Frame* frame, bool wanted, bool forceKeyframe) noexcept;
  /// Congestion control's target for the VP8 encode (kb/s; 0: keep the configured bitrate). Any thread.
  void setTargetKbps(std::uint32_t kbps) noexcept { targetKbps_.store(kbps); }
  /// Ends the VP8 thread (the frame waiting is dropped); idempotent.
  void stop() noexcept;
  Vp8EncodeStatus status() const;

 private:
  void run() noexcept;
  void encodeOne(FrameLease& in) noexcept;
  void close() noexcept;
  void followTarget() noexcept;

  EncoderConfig config_;
  std::function<void(const EncodedUnitPtr&)> deliver_;
  Vp8Input input_;                    // the encode thread's: writes offer()'s frame into a copy
  BufferPool copies_;                 // the frames handed over: one encoding, one waiting, one being copied
  BoundedQueue<FrameLease> queue_{1};  // drop oldest
  std::atomic<bool> keyframe_{false};  // a viewer asked: the next VP8 frame is a keyframe
  std::atomic<bool> wanted_{false};    // at the encode thread's last frame, some sink wanted VP8
  std::atomic<std::uint32_t> targetKbps_{0};  // congestion control's VP8 target; 0: none
  std::uint32_t appliedKbps_ = 0;             // the VP8 thread's: what encoder_ codes for
  bool followTarget_ = true;                  // false once the encoder refused a rate (logged once)
  std::unique_ptr<VideoEncoder> encoder_;  // the VP8 thread's; null while no sink wants VP8
  LatencyStats latency_{300};
  mutable std::mutex mutex_;  // guards status_ and finished_
  Vp8EncodeStatus status_;
  EncoderStats finished_{};  // the counters of encoders already closed
  std::thread thread_;       // last: starts once everything above exists
};

}  // namespace zerohop
