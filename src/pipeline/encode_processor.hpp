#pragma once
// The CPU data path: each source frame (raw YUV or MJPEG) is converted to I420 (libyuv / libjpeg-turbo)
// and encoded (x264). With a frame share it converts straight into a slot of the share ring (no extra
// copy), publishes it and encodes from that slot. The frame stays readable until the next frame, for the
// VP8 encode (lastHostFrame()).
// Thread-safety: thread-bound (the encode thread); encoderName() is immutable.

#include <optional>

#include "frame_processor.hpp"
#include "zerohop/buffer_pool.hpp"
#include "convert/converter.hpp"
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
  const Frame* lastHostFrame() override { return last_ ? &*last_ : nullptr; }
  std::string vp8Unavailable() const override { return {}; }

 private:
  std::unique_ptr<FrameConverter> converter_;
  std::optional<BufferPool> converted_;
  std::unique_ptr<VideoEncoder> encoder_;
  std::string encoderName_;
  Publisher* framesShare_;  // borrowed; may be null
  // The frame the last process() encoded, kept for the VP8 encode: a converted_ slot (held by
  // lastLease_ until the next process()) or the share slot just committed (this thread, the ring's only
  // writer, acquires no slot before the next process(), so it stays as written).
  std::optional<FrameLease> lastLease_;
  std::optional<Frame> last_;
  bool forceKeyframe_ = false;
};

}  // namespace zerohop
