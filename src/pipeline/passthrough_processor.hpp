#pragma once
// The passthrough data path: a camera that delivers H.264 has its access units sent to WebRTC as they
// are, with no decode and no encode. The bytes are copied once out of the V4L2 buffer into the
// immutable EncodedUnit every viewer shares (so the buffer goes straight back to the camera); SPS/PPS
// are cached and put in front of every IDR that lacks them (H264ParameterSets). A viewer's keyframe
// request is forwarded to the camera (FrameSource::requestKeyframe(), V4L2_CID_MPEG_VIDEO_FORCE_KEY_FRAME);
// a camera without that control is logged once and new viewers wait for its next IDR (the pipeline
// measures that wait: KeyframeWaits).
// A lost unit breaks every unit that refers to it until the next IDR: when the pipeline's queue drops
// one (evicted()) or the source counts a drop (a V4L2 sequence gap, RTP packets lost on the way to an
// RTSP camera's depayloader), nothing is sent until the camera's next IDR, which is asked for where
// the camera takes requests. Viewers hold their last whole picture meanwhile instead of decoding
// garbage; the units held back are counted (unitsHeldBack(), /stats held_back_until_idr).
// Stage times: capture and ingest come from the source; convert and encode do not exist here.
// Its units are decoded beside it, for the frame share and VP8, by PassthroughPictures (the pipeline).
// Thread-safety: thread-bound (the encode thread); encoderName() is immutable; evicted() and arrived()
// run on the capture thread (the parameter sets and the chain's breaks are guarded by a mutex);
// unitsHeldBack() is atomic.

#include <atomic>
#include <mutex>
#include <optional>
#include <set>

#include "frame_processor.hpp"
#include "h264_parameter_sets.hpp"

namespace zerohop {

class PassthroughProcessor final : public FrameProcessor {
 public:
  /// Borrows `source` (it must outlive this) to forward keyframe requests.
  PassthroughProcessor(FrameSource& source, const SourceInfo& info);
  EncodedUnitPtr process(FrameLease& in) override;
  bool requestKeyframe() override;
  bool setBitrate(std::uint32_t) override { return false; }
  /// A camera that sends SPS/PPS only once loses them for good when the queue drops that unit (the
  /// encode thread started late, or fell behind): they are learned from it here. A referenced unit
  /// dropped breaks the units after it (by sequence) until an IDR after it.
  void evicted(const Frame& f) override;
  /// The source's drops counted since the last unit lie before this one: it and what follows wait for
  /// an IDR at or after it. A sequence that goes back (the source restarted) waits for an IDR too.
  void arrived(const Frame& f) override;
  std::uint64_t unitsHeldBack() const noexcept override { return heldBack_.load(std::memory_order_relaxed); }
  std::string encoderName() const override { return encoderName_; }
  std::string vp8Unavailable() const override { return "the camera's H.264 is passed through undecoded"; }

 private:
  FrameSource& source_;
  std::uint32_t width_;
  std::uint32_t height_;
  std::string encoderName_;
  enum class Hold { kNo, kYes, kFirst };  // kFirst: the first unit held back since the loss
  // From a lost unit to the next IDR after it the units between refer to what was lost: they are
  // held back. Under mutex_.
  Hold holdUntilIdr(bool idr, std::uint64_t sequence, std::int64_t now);

  std::mutex mutex_;  // process() on the encode thread, evicted() and arrived() on the capture thread
  H264ParameterSets parameterSets_;
  // Where the chain breaks, by the source's sequence: a non-IDR unit at or after one of these is held
  // back until an IDR at or after it has been sent. By position, not a flag: the queue may drop a unit
  // AFTER an IDR it still holds (guarded by mutex_).
  std::set<std::uint64_t> breaks_;
  std::uint64_t sourceDropsSeen_ = 0;         // capture thread
  std::optional<std::uint64_t> lastArrived_;  // capture thread
  std::uint64_t heldThisTime_ = 0;
  std::int64_t brokenSinceNs_ = 0;
  std::int64_t lastRepairLogNs_ = 0;
  std::atomic<std::uint64_t> heldBack_{0};
  bool warnedNoKeyframeControl_ = false;
  bool warnedMissingParameterSets_ = false;
  std::uint64_t inserted_ = 0;
};

}  // namespace zerohop
