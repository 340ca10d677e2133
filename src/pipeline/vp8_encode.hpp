#pragma once
// The second encode, for WHEP viewers whose offer has no usable H.264 (Firefox ESR: VP8/VP9/AV1):
// libvpx VP8 at the H.264 encode's size, rate, bitrate and keyframe interval, fed the same host I420
// frame the H.264 encode took (FrameProcessor::lastHostFrame). It runs only while a sink wants VP8:
// opened on the first frame some sink wants it for (its first frame is a keyframe), closed on the
// first frame none does. A keyframe request from any viewer forces one here too while it runs.
// It runs on the encode thread after the H.264 unit was handed to the sinks, so no H.264 unit waits on
// the VP8 encode of its own frame; but it adds its encode time to that thread's budget per frame, which
// both encodes then share (docs/stream.md, "Codec choice").
// Thread-safety: step() and record() from the encode thread only; status() from any thread.

#include <cstdint>
#include <memory>
#include <mutex>
#include <string>

#include "zerohop/encoder.hpp"
#include "zerohop/latency_stats.hpp"
#include "zerohop/pipeline.hpp"

namespace zerohop {

class Vp8Encode {
 public:
  /// `config`: the H.264 encode's settings (size, fps, bitrate, keyframe interval and colour are kept).
  explicit Vp8Encode(EncoderConfig config);

  /// One frame: `wanted` = some sink wants VP8 now; `frame` = the host I420 frame the H.264 encode
  /// took (null: nothing to encode). Returns the VP8 unit, or null (not wanted, no frame, or the
  /// encoder failed: logged, and a failure to open is not retried). Never throws.
  EncodedUnitPtr step(const Frame* frame, bool wanted, bool forceKeyframe) noexcept;
  /// The unit's stage times once it was handed to the sinks (Stage::kSend marked).
  void record(const StageTimes& times) { latency_.record(times); }
  Vp8EncodeStatus status() const;

 private:
  EncoderConfig config_;
  std::unique_ptr<VideoEncoder> encoder_;  // null while no sink wants VP8
  LatencyStats latency_{300};
  mutable std::mutex mutex_;  // guards status_ (status() reads it from HTTP threads)
  Vp8EncodeStatus status_;
  EncoderStats finished_{};  // the counters of encoders already closed
};

}  // namespace zerohop
