#pragma once
// The lower rungs of a camera's ladder of renditions (docs/ARCHITECTURE.md, "Renditions"): each is the
// frame the main encode (rung 0) just took, scaled down (a FrameScaler: libyuv on the CPU path, CUDA
// from the device frame on the GPU path) and encoded again on the encode thread, right after rung 0's unit
// went out: by x264, or, where rung 0 is NVENC (RenditionNvenc), by an NVENC session of its own reading the
// rung's scaled NV12 picture in VRAM (nothing comes back to the CPU). A rung whose NVENC session does not
// open (a GeForce card's limit on sessions at once, each rung one) is said and encoded by x264 from a
// host copy of its scaled picture instead, so its viewers still get it. A rung is encoded only while a sink
// wants it (UnitSink::wants of its TrackKey): its encoder opens on the first such frame (its first unit is an
// IDR, SPS/PPS in band) and closes at the first frame no sink wants it for. Each rung follows its own target
// (UnitSink::targetKbps, no keyframe); a keyframe request forces one on the rung it names only (the viewers
// of the others keep their quantiser; a viewer switching rung waits for its new rung's IDR). Thread-safety:
// thread-bound (the encode thread); status() from any thread. Ownership: the pipeline owns it; `deliver`
// borrows the pipeline's sinks.

#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <vector>

#include "zerohop/buffer_pool.hpp"
#include "convert/converter.hpp"
#include "zerohop/encoder.hpp"
#include "zerohop/pipeline.hpp"
#include "zerohop/sinks.hpp"

namespace zerohop {

/// Where a ladder's lower rungs are NVENC sessions: on `gpuDevice` (-1: none, x264 only), each reading its
/// scaled NV12 picture from `memory` (device memory of that GPU).
struct RenditionNvenc {
  int gpuDevice = -1;
  std::function<std::unique_ptr<FrameAllocator>()> memory;
};

class RenditionEncodes {
 public:
  /// What the encode thread asks of the sinks for rung `rung`: wanted now, and its target (0: none).
  struct Demand {
    std::function<bool(std::size_t rung)> wanted;
    std::function<std::uint32_t(std::size_t rung)> targetKbps;
    std::function<void(std::size_t rung, const EncodedUnitPtr&)> deliver;
  };
  /// `ladder`: rung 0 first (not encoded here); `config`: rung 0's encoder settings (encoder, fps,
  /// keyframe interval, preset, colour are kept; size and bitrate are each rung's); `scaler`: owned;
  /// `scaledMemory`: where each rung's scaled I420 picture lives, what its encoder reads (host memory;
  /// on the GPU path page-locked, so the scaler's one copy down is a DMA).
  RenditionEncodes(std::vector<Rendition> ladder, EncoderConfig config, std::unique_ptr<FrameScaler> scaler,
                   Demand demand,
                   std::function<std::unique_ptr<FrameAllocator>()> scaledMemory = makeHostAllocator,
                   RenditionNvenc nvenc = {});

  /// After rung 0 encoded `frame` (I420 or NV12 the scaler reads: host memory on the CPU path, the
  /// device frame on the GPU path; null: none): scales and encodes it for each
  /// lower rung a sink wants, and delivers the units. `forceRungs` bit r: rung r makes an IDR (if it
  /// runs; one that starts makes one anyway). Never throws (a failing rung is logged once and skipped
  /// until it is no longer wanted).
  void encode(const Frame* frame, std::uint32_t forceRungs) noexcept;
  std::vector<RenditionStatus> status() const;

 private:
  struct Rung {
    Rendition size;
    std::unique_ptr<BufferPool> scaled;     // what its encoder reads: NV12 in VRAM (NVENC), else I420
    bool scaledOnDevice = false;            // `scaled` is the NVENC kind
    std::unique_ptr<VideoEncoder> encoder;  // null while no sink wants the rung
    bool nvenc = false;                     // the running encoder is an NVENC session
    std::uint32_t appliedKbps = 0;
    std::int64_t rateChangedNs = 0;  // NVENC: when its rate last changed (each change costs an IDR)
    bool failed = false;  // it could not open or encode: not retried until it is no longer wanted
  };
  void encodeRung(std::size_t index, Rung& rung, const Frame& frame, bool forceKeyframe);
  void open(std::size_t index, Rung& rung, std::uint32_t kbps);  // NVENC where it opens, else x264
  void followTarget(std::size_t index, Rung& rung, std::uint32_t targetKbps);

  EncoderConfig config_;
  std::function<std::unique_ptr<FrameAllocator>()> scaledMemory_;  // x264's scaled pictures
  RenditionNvenc nvenc_;
  std::unique_ptr<FrameScaler> scaler_;
  Demand demand_;
  std::vector<std::unique_ptr<Rung>> rungs_;  // [0] is rung 1
  mutable std::mutex mutex_;                  // guards status_
  std::vector<RenditionStatus> status_;       // [0] is rung 0's (sizes only)
};

}  // namespace zerohop
