#include "passthrough_processor.hpp"

#include "encode/annexb.hpp"
#include "zerohop/error.hpp"
#include "zerohop/log.hpp"

namespace zerohop {

PassthroughProcessor::PassthroughProcessor(FrameSource& source, const SourceInfo& info)
    : source_(source),
      width_(info.width),
      height_(info.height),
      encoderName_("passthrough (camera H.264, no decode, no encode)") {}

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

EncodedUnitPtr PassthroughProcessor::process(FrameLease& in) {
  const Frame& f = in.frame();
  if (f.format != PixelFormat::kH264)
    throw Error(Errc::kInvalidArgument,
                std::string("passthrough got a ") + std::string(formatName(f.format)) + " frame, not H.264");
  auto unit = std::make_shared<EncodedUnit>();
  unit->codec = PixelFormat::kH264;
  unit->width = width_;
  unit->height = height_;
  unit->sequence = f.sequence;
  unit->wallClockMs = f.wallClockMs;
  unit->ptsNs = f.captureNs();
  unit->times = f.times;
  const auto result = parameterSets_.apply(f.data[0], f.bytesUsed, unit->bytes);
  in.reset();  // the camera's buffer goes back now; the unit owns its copy
  unit->keyframe = encode::containsIdr(unit->bytes.data(), unit->bytes.size());
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
