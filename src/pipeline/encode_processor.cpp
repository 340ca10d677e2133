#include "encode_processor.hpp"

#include <utility>

#include "source_encoder_config.hpp"
#include "zerohop/error.hpp"
#include "zerohop/share.hpp"

namespace zerohop {
namespace {

constexpr std::uint32_t kConvertedSlots = 3;

}  // namespace

EncodeProcessor::EncodeProcessor(EncoderConfig enc, const SourceInfo& source, Publisher* framesShare)
    : framesShare_(framesShare) {
  converter_ = makeCpuConverter();
  converted_.emplace(computeLayout(PixelFormat::kI420, source.width, source.height, 64), kConvertedSlots,
                     makeHostAllocator());
  encoder_ = makeEncoder(encoderConfigFor(std::move(enc), source, PixelFormat::kI420));
  encoderName_ = encoder_->name();
}

bool EncodeProcessor::requestKeyframe() {
  forceKeyframe_ = true;
  return true;
}

bool EncodeProcessor::setBitrate(std::uint32_t kbps) {
  encoder_->setBitrate(kbps);
  return true;
}

EncodedUnitPtr EncodeProcessor::process(FrameLease& in) {
  const bool idr = std::exchange(forceKeyframe_, false);
  last_.reset();
  if (framesShare_) {
    // Converts straight into a slot of the share ring, publishes it, then encodes from the same slot:
    // this thread is the ring's only writer and does not acquire the next slot before this encode is
    // done, so the slot is stable while the encoder reads it.
    WriteSlot slot = framesShare_->acquireWrite();
    Frame frame = slot.frame();
    converter_->convert(in.frame(), frame);
    in.reset();  // the source buffer goes back as soon as its pixels are converted
    framesShare_->commit(std::move(slot), frame);
    auto unit = encoder_->encode(frame, idr);
    last_ = frame;
    return unit;
  }
  auto out = converted_->tryAcquire();
  // Cannot happen with one encode thread (at most the last frame's slot is held); thrown so the
  // pipeline drops and counts the frame.
  if (!out) throw Error(Errc::kInternal, "no free conversion buffer");
  lastLease_.reset();
  converter_->convert(in.frame(), out->frame());
  in.reset();
  auto unit = encoder_->encode(out->frame(), idr);
  last_ = out->frame();
  lastLease_ = std::move(out);
  return unit;
}

}  // namespace zerohop
