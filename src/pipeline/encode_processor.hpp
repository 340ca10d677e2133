#pragma once
// The CPU data path: each source frame (raw YUV or MJPEG) is converted to I420 (libyuv / libjpeg-turbo)
// and encoded (x264). With a frame share it converts straight into a slot of the share ring (no extra
// copy), publishes it and encodes from that slot.
// Thread-safety: thread-bound (the encode thread); encoderName() is immutable.

#include <optional>

#include "frame_processor.hpp"
#include "zerohop/buffer_pool.hpp"
#include "zerohop/converter.hpp"
#include "zerohop/encoder.hpp"

namespace zerohop {

class EncodeProcessor final : public FrameProcessor {
 public:
  /// `encoder`'s size and fps are taken from `source`. Throws Error when the encoder cannot open.
  EncodeProcessor(EncoderConfig encoder, const SourceInfo& source, Publisher* framesShare);
  EncodedUnitPtr process(FrameLease& in) override;
  bool requestKeyframe() override;
  bool setBitrate(std::uint32_t kbps) override;
  std::string encoderName() const override { return encoderName_; }

 private:
  std::unique_ptr<FrameConverter> converter_;
  std::optional<BufferPool> converted_;
  std::unique_ptr<VideoEncoder> encoder_;
  std::string encoderName_;
  Publisher* framesShare_;  // borrowed; may be null
  bool forceKeyframe_ = false;
};

}  // namespace zerohop
