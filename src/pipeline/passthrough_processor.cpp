#include "passthrough_processor.hpp"

#include "encode/annexb.hpp"
#include "zerohop/clock.hpp"
#include "zerohop/error.hpp"
#include "zerohop/log.hpp"

namespace zerohop {
namespace {

constexpr std::int64_t kRepairLogGapNs = 60'000'000'000;  // one line a minute about lost units at most

}  // namespace

PassthroughProcessor::PassthroughProcessor(FrameSource& source, const SourceInfo& info)
    : source_(source),
      width_(info.width),
      height_(info.height),
      encoderName_("passthrough (camera H.264, no decode, no encode)"),
      sourceDropsSeen_(source.counters().drops) {}

bool PassthroughProcessor::requestKeyframe() {
  if (source_.requestKeyframe()) return true;
  if (!warnedNoKeyframeControl_) {
    warnedNoKeyframeControl_ = true;
    log::warn("passthrough: the camera does not take keyframe requests (a V4L2 camera without "
              "V4L2_CID_MPEG_VIDEO_FORCE_KEY_FRAME, or an RTSP camera); viewers' requests cannot be honoured and new "
              "viewers wait for the camera's next IDR (the wait: /stats keyframe_wait; shorten the camera's "
              "I-frame interval to shorten it)");
  }
  return false;
}

void PassthroughProcessor::evicted(const Frame& f) {
  if (f.format != PixelFormat::kH264 || !f.data[0]) return;
  const bool referenced = encode::isReferenced(f.data[0], f.bytesUsed);
  std::lock_guard lock(mutex_);
  parameterSets_.learn(f.data[0], f.bytesUsed);
  if (referenced) breaks_.insert(f.sequence + 1);
}

void PassthroughProcessor::arrived(const Frame& f) {
  const std::uint64_t drops = source_.counters().drops;  // counted by this thread in next()
  const bool restarted = lastArrived_ && f.sequence < *lastArrived_;
  lastArrived_ = f.sequence;
  if (drops == sourceDropsSeen_ && !restarted) return;
  sourceDropsSeen_ = drops;
  std::lock_guard lock(mutex_);
  if (restarted) breaks_.clear();  // positions of the old numbering mean nothing now
  breaks_.insert(f.sequence);
}

PassthroughProcessor::Hold PassthroughProcessor::holdUntilIdr(bool idr, std::uint64_t sequence,
                                                              std::int64_t now) {
  if (breaks_.empty() || *breaks_.begin() > sequence) return Hold::kNo;  // no break at or before it
  if (idr) {  // whole again, up to here (a unit dropped after it still breaks what follows)
    breaks_.erase(breaks_.begin(), breaks_.upper_bound(sequence));
    if (heldThisTime_ > 0) {
      log::debug("passthrough: whole again at the camera's IDR after ", heldThisTime_, " units held back (",
                 (now - brokenSinceNs_) / 1'000'000, " ms)");
    }
    heldThisTime_ = 0;
    return Hold::kNo;
  }
  heldBack_.fetch_add(1, std::memory_order_relaxed);
  if (heldThisTime_++ > 0) return Hold::kYes;
  brokenSinceNs_ = now;
  return Hold::kFirst;
}

EncodedUnitPtr PassthroughProcessor::process(FrameLease& in) {
  const Frame& f = in.frame();
  if (f.format != PixelFormat::kH264)
    throw Error(Errc::kInvalidArgument,
                std::string("passthrough got a ") + std::string(formatName(f.format)) + " frame, not H.264");
  auto unit = std::make_shared<EncodedUnit>();
  unit->codec = Codec::kH264;
  unit->width = width_;
  unit->height = height_;
  unit->sequence = f.sequence;
  unit->wallClockMs = f.wallClockMs;
  unit->ptsNs = f.captureNs();
  unit->times = f.times;
  const bool idr = encode::containsIdr(f.data[0], f.bytesUsed);
  const std::int64_t now = monotonicNs();
  H264ParameterSets::Result result;
  Hold hold = Hold::kNo;
  {
    std::lock_guard lock(mutex_);
    result = parameterSets_.apply(f.data[0], f.bytesUsed, unit->bytes);
    if (result == H264ParameterSets::Result::kMissing) {
      breaks_.insert(f.sequence + 1);  // this IDR cannot be sent: what follows refers to it
    } else {
      hold = holdUntilIdr(idr, f.sequence, now);
    }
  }
  in.reset();  // the camera's buffer goes back now; the unit owns its copy
  unit->keyframe = idr;
  if (hold != Hold::kNo) {
    if (hold == Hold::kFirst) {
      const bool asked = source_.requestKeyframe();
      if (lastRepairLogNs_ == 0 || now - lastRepairLogNs_ >= kRepairLogGapNs) {
        lastRepairLogNs_ = now;
        log::warn(
            "passthrough: a unit later ones refer to was lost (the encode fell behind, or the camera or "
            "the network dropped it); nothing is sent until the camera's next IDR, so viewers keep a "
            "whole picture",
            asked ? " (the camera was asked for one now)"
                  : " (the camera takes no requests: up to its I-frame interval)",
            "; units held back so far: ", heldBack_.load(std::memory_order_relaxed),
            " (/stats held_back_until_idr; at most one such line a minute)");
      }
    }
    return nullptr;
  }
  if (result == H264ParameterSets::Result::kMissing) {
    if (!warnedMissingParameterSets_) {
      warnedMissingParameterSets_ = true;
      log::warn("passthrough: an IDR came before any SPS/PPS; such frames are dropped until the camera sends them");
    }
    throw Error(Errc::kUnsupported, "IDR without SPS/PPS (none seen yet)");
  }
  if (result == H264ParameterSets::Result::kInserted && inserted_++ == 0) {
    log::info("passthrough: the camera sends SPS/PPS only with some IDRs; the cached ones are inserted before the others");
  }
  return unit;
}

}  // namespace zerohop
