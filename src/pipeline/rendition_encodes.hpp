#pragma once
// The lower rungs of a camera's ladder of renditions (docs/ARCHITECTURE.md, "Renditions"): each is the
// frame the main encode (rung 0) just took, scaled down (a FrameScaler: libyuv on the CPU path, CUDA
// from the device frame on the GPU path) and encoded again on the encode thread, right after rung 0's unit
// went out: by x264, or, where rung 0 is NVENC (RenditionNvenc), by an NVENC session of its own reading the
// rung's scaled NV12 picture in VRAM (nothing comes back to the CPU). A rung whose NVENC session does not
// open (a GeForce card's limit on sessions at once, each rung one) is said and encoded by x264 from a
// host copy of its scaled picture instead, so its viewers still get it. With VP8 rungs (`vp8`), each rung is
// also encoded by libvpx from the same scaled I420 picture for VP8 receivers (the browsers without H.264):
// one scale a rung a frame, whichever codecs want it. A rung's encode of a codec runs only while a sink
// wants it (UnitSink::wants of its TrackKey): its encoder opens on the first such frame (its first unit is a
// keyframe, SPS/PPS in band for H.264) and closes at the first frame no sink wants it for. Each follows its
// own target (UnitSink::targetKbps, no keyframe); a keyframe request forces one on the encode it names only
// (the viewers of the others keep their quantiser; a viewer switching rung waits for its new rung's
// keyframe). Thread-safety:
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
  /// What the encode thread asks of the sinks for a rung's track (its codec and rung): wanted now, and
  /// its target (0: none).
  struct Demand {
    std::function<bool(TrackKey track)> wanted;
    std::function<std::uint32_t(TrackKey track)> targetKbps;
    std::function<void(TrackKey track, const EncodedUnitPtr&)> deliver;
  };
  /// `ladder`: rung 0 first (not encoded here); `config`: rung 0's encoder settings (encoder, fps,
  /// keyframe interval, preset, colour are kept; size and bitrate are each rung's); `scaler`: owned;
  /// `scaledMemory`: where each rung's scaled I420 picture lives, what its encoder reads (host memory;
  /// on the GPU path page-locked, so the scaler's one copy down is a DMA); `vp8`: the lower rungs are
  /// made in VP8 too, for the sinks that want them.
  RenditionEncodes(std::vector<Rendition> ladder, EncoderConfig config, std::unique_ptr<FrameScaler> scaler,
                   Demand demand,
                   std::function<std::unique_ptr<FrameAllocator>()> scaledMemory = makeHostAllocator,
                   RenditionNvenc nvenc = {}, bool vp8 = false);

  /// After rung 0 encoded `frame` (I420 or NV12 the scaler reads: host memory on the CPU path, the
  /// device frame on the GPU path; null: none): scales and encodes it for each
  /// lower rung a sink wants, and delivers the units. `forceRungs` bit r: H.264 rung r makes an IDR (if
  /// it runs; one that starts makes one anyway); `forceVp8Rungs` the same for VP8. Never throws (a failing
  /// encode is logged once and skipped until it is no longer wanted).
  void encode(const Frame* frame, std::uint32_t forceRungs, std::uint32_t forceVp8Rungs = 0) noexcept;
  /// Each rung's H.264 encode, rung 0 first (sizes only: the main encode is not here).
  std::vector<RenditionStatus> status() const;
  /// Each rung's VP8 encode the same way (codec kVP8; rung 0, the VP8 encode of the full size, sizes
  /// only); empty without VP8 rungs.
  std::vector<RenditionStatus> vp8Status() const;

 private:
  struct Encode {                           // one codec's encode of a rung
    std::unique_ptr<VideoEncoder> encoder;  // null while no sink wants it
    bool nvenc = false;                     // the running encoder is an NVENC session
    std::uint32_t appliedKbps = 0;
    std::int64_t rateChangedNs = 0;  // NVENC: when its rate last changed (each change costs an IDR)
    bool failed = false;  // it could not open or encode: not retried until it is no longer wanted
    Codec codec = Codec::kH264;
  };
  struct Rung {
    Rendition size;
    std::size_t index = 0;                 // its place in the ladder (1 ..)
    std::unique_ptr<BufferPool> onDevice;  // NVENC's scaled picture: NV12 in VRAM
    std::unique_ptr<BufferPool> onHost;    // x264's and VP8's: I420 in scaledMemory_
    Encode h264, vp8;
  };
  // Stops `e` when no sink wants `track`; true while it is wanted.
  bool keepWanted(Rung& rung, Encode& e, TrackKey track);
  void encodeRung(Rung& rung, const Frame& frame, bool wantH264, bool wantVp8, bool forceH264, bool forceVp8);
  void encodeOne(Rung& rung, Encode& e, TrackKey track, const Frame& picture, bool forceKeyframe);
  void open(Rung& rung, Encode& e, TrackKey track,
            std::uint32_t kbps);  // H.264: NVENC where it opens, else x264
  void followTarget(Rung& rung, Encode& e, std::uint32_t targetKbps);
  RenditionStatus& statusOf(const Rung& rung, const Encode& e);  // under mutex_

  EncoderConfig config_;
  std::function<std::unique_ptr<FrameAllocator>()> scaledMemory_;  // x264's scaled pictures
  RenditionNvenc nvenc_;
  bool vp8_ = false;
  std::unique_ptr<FrameScaler> scaler_;
  Demand demand_;
  std::vector<std::unique_ptr<Rung>> rungs_;  // [0] is rung 1
  mutable std::mutex mutex_;                  // guards status_
  std::vector<RenditionStatus> status_;       // per rung, its H.264 encode's; [0] is rung 0's (sizes only)
  std::vector<RenditionStatus> vp8Status_;    // per rung, its VP8 encode's (empty without VP8 rungs)
};

}  // namespace zerohop
