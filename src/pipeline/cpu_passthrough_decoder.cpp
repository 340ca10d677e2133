#include "cpu_passthrough_decoder.hpp"

extern "C" {
#include <libavutil/frame.h>
}

#include "convert/converter.hpp"
#include "encode/av_handles.hpp"
#include "rtsp/h264_cpu_decoder.hpp"
#include "zerohop/clock.hpp"
#include "zerohop/log.hpp"
#include "zerohop/share.hpp"

namespace zerohop {
namespace {

class CpuPassthroughDecoder final : public PassthroughDecoder {
 public:
  CpuPassthroughDecoder(const SourceInfo& source, Publisher* framesShare)
      : source_(source), framesShare_(framesShare), copier_(makeCpuConverter()) {}

  const Frame* decode(const EncodedUnit& unit, bool keep) override {
    decoded_ = decoder_.decode(unit.bytes.data(), unit.bytes.size());
    if (!decoded_ || !keep) return nullptr;
    Frame& f = picture_;
    f = rtsp::i420View(*decoded_);
    f.sequence = unit.sequence;
    f.keyframe = unit.keyframe;
    f.wallClockMs = unit.wallClockMs;
    f.times = unit.times;
    f.times.mark(Stage::kConvert, monotonicNs());
    if (framesShare_) share(f);
    return &picture_;
  }

  const Frame* hostPicture() override { return decoded_ ? &picture_ : nullptr; }
  std::string name() const override { return "libavcodec H.264 (CPU)"; }

 private:
  // One copy of the picture into a slot of the frame share (I420 at the camera's size).
  void share(const Frame& picture) {
    if (picture.width != source_.width || picture.height != source_.height) {
      if (!shareSizeWarned_) {
        shareSizeWarned_ = true;
        log::warn(source_.description, ": its H.264 decodes to ", picture.width, "x", picture.height,
                  " while its stream said ", source_.width, "x", source_.height,
                  "; the frame share is made for the latter and gets none of these pictures");
      }
      return;
    }
    WriteSlot slot = framesShare_->acquireWrite();
    Frame frame = slot.frame();
    copier_->convert(picture, frame);
    frame.sequence = picture.sequence;
    frame.keyframe = picture.keyframe;
    frame.wallClockMs = picture.wallClockMs;
    frame.times = picture.times;
    framesShare_->commit(std::move(slot), frame);
  }

  SourceInfo source_;
  Publisher* framesShare_;
  std::unique_ptr<FrameConverter> copier_;
  rtsp::H264CpuDecoder decoder_;
  encode::AvFramePtr decoded_;  // the last picture decoded
  Frame picture_;               // decoded_ as a Frame, with its unit's times
  bool shareSizeWarned_ = false;
};

}  // namespace

std::unique_ptr<PassthroughDecoder> makeCpuPassthroughDecoder(const SourceInfo& source,
                                                              Publisher* framesShare) {
  return std::make_unique<CpuPassthroughDecoder>(source, framesShare);
}

}  // namespace zerohop
