#pragma once
// The stage the pipeline's encode thread drives: one source frame in, at most one H.264 access unit
// out. One implementation per data path, each in its own file:
//   EncodeProcessor      (encode_processor.cpp)       raw/MJPEG -> CPU convert (libyuv) -> x264
//   PassthroughProcessor (passthrough_processor.cpp)  camera H.264 -> WebRTC as is (no decode, no encode)
//   GpuProcessor         (gpu_processor.cpp)          raw/MJPEG -> VRAM (DMA + kernel / nvJPEG) -> NVENC,
//                                                     or x264 on a host copy; device-frame share
// chosen in makeFrameProcessor() (make_frame_processor.cpp) from choosePath() (src/gpupath/gpu_path.hpp). The pipeline around it owns the threads, the
// drop-oldest queue, the keyframe-request rate limit, the fan-out (StreamServer, NAME.h264 share) and
// the stage statistics.
// Thread-safety: thread-bound to the encode thread, except encoderName() (immutable, any thread) and
// evicted() (the capture thread; an implementation guards what it shares with process()).
// Ownership: makeFrameProcessor() transfers the processor; it borrows the source and the frame
// share, which the pipeline keeps alive longer than the processor.

#include <memory>
#include <string>

#include "zerohop/encoded_unit.hpp"
#include "gpupath/gpu_path.hpp"
#include "zerohop/frame.hpp"
#include "zerohop/pipeline.hpp"

namespace zerohop {

class Publisher;

class FrameProcessor {
 public:
  virtual ~FrameProcessor() = default;
  /// Turns one source frame into its access unit (Annex B, SPS/PPS before every IDR; stage times
  /// carried over), or nullptr when there is nothing to send for it. Gives the source buffer back
  /// (`in.reset()`) as soon as its bytes are no longer needed. Throws Error for a bad frame: the
  /// pipeline drops that frame alone and counts it.
  virtual EncodedUnitPtr process(FrameLease& in) = 0;
  /// A viewer asked for a keyframe (join, PLI/FIR, fell behind); the pipeline has rate-limited it.
  /// True when it will be honoured: the next encoded frame is an IDR, or the camera was asked for one.
  virtual bool requestKeyframe() = 0;
  /// Congestion control's target for the encoder, from the next frame on, without a keyframe. False
  /// when this path cannot follow it (passthrough: the camera's encoder is not ours).
  virtual bool setBitrate(std::uint32_t kbps) = 0;
  /// What produces the access units, for /stats and the log: "libx264 (...)", "passthrough (...)".
  virtual std::string encoderName() const = 0;

  /// The host frame the last process() encoded, for the VP8 encode (Vp8Encode) to take the same
  /// picture: I420 on the CPU path, NV12 on the GPU path (x264's host copy, or with NVENC one download
  /// made by this call: ask only while a sink wants VP8). Valid until the next process() or the
  /// processor's end; null when there was none. Throws Error (the GPU path's download).
  virtual const Frame* lastHostFrame() { return nullptr; }
  /// The device frame the last process() encoded (the GPU path's NV12 in VRAM), from which a
  /// ladder's lower rungs are scaled on the device; valid until the next process(); null on the
  /// other paths or when there was none.
  virtual const Frame* lastDeviceFrame() { return nullptr; }
  /// Whether the access units are encoded from the device frame (NVENC on the GPU path): a ladder's
  /// lower rungs are then NVENC sessions too, where they open.
  virtual bool encodesFromDevice() const { return false; }
  /// A frame the pipeline's queue dropped before process() saw it (the encode fell behind), called on
  /// the capture thread before its buffer goes back. Passthrough learns the SPS/PPS it may carry.
  virtual void evicted(const Frame&) {}
  /// A frame the capture thread is about to queue, called on that thread before the queue sees it
  /// (so before any eviction it causes). Passthrough notes where the source's drops lie.
  virtual void arrived(const Frame&) {}
  /// Units this path did not send because one they depend on was lost (passthrough: after a drop it
  /// sends nothing until the camera's next IDR, so viewers show a still picture, not a broken one).
  /// Any thread.
  virtual std::uint64_t unitsHeldBack() const noexcept { return 0; }
  /// "" when this path can feed the VP8 encode (lastHostFrame()), else why not, in words a viewer's
  /// 422 and the log carry.
  virtual std::string vp8Unavailable() const = 0;
};

/// Builds the data path for `source`: an H.264 camera is passed through; otherwise `gpu` (from
/// choosePath) picks the GPU path or the CPU path, either of which converts straight into
/// `framesShare` (the pipeline's frame share: device NV12 on the GPU path, host I420 on the CPU path;
/// may be null). Throws Error (encoder cannot open, --encoder nvenc on the CPU path, ...).
std::unique_ptr<FrameProcessor> makeFrameProcessor(const PipelineConfig& config, FrameSource& source,
                                                   Publisher* framesShare, const GpuPathChoice& gpu);

/// True when `source` is served without decoding (it delivers H.264): no raw frames exist to share.
bool isPassthroughSource(const SourceInfo& source) noexcept;

}  // namespace zerohop
