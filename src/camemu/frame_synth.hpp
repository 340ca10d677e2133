#pragma once
// Produces the emulated camera's frames: the test camera's picture and timecode (PatternFrames),
// in the format the client negotiated. Raw formats are rendered straight into the destination
// buffer (the emulator's "kernel copy"); MJPEG is compressed from a YUYV render.
// Thread-safety: thread-bound (owned by one stream's producer thread).

#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

#include "camemu/mode_table.hpp"

namespace zerohop {
class PatternFrames;
}

namespace zerohop::camemu {

class JpegEncoder;
class H264Encoder;

class FrameSynth {
 public:
  /// `fps` paces the H.264 encoder's rate control and IDR interval; `h264HeadersEveryIdr` false sends
  /// SPS/PPS only before the first IDR (other formats ignore both).
  explicit FrameSynth(const WireFormat& wire, std::uint32_t fps = 30, bool h264HeadersEveryIdr = true);
  ~FrameSynth();
  FrameSynth(const FrameSynth&) = delete;
  FrameSynth& operator=(const FrameSynth&) = delete;

  const WireFormat& wire() const noexcept { return wire_; }
  /// Renders frame `sequence` stamped with `wallClockMs` into `dst` (`capacity` bytes). Returns
  /// the bytes used, or 0 when the frame does not fit (the caller flags the buffer as an error).
  std::size_t render(std::uint64_t sequence, std::int64_t wallClockMs, std::uint8_t* dst,
                     std::size_t capacity);
  /// Whether the last rendered frame is self-contained (always for raw and MJPEG; IDR for H.264).
  bool keyframe() const noexcept { return keyframe_; }
  /// H.264: the next rendered frame is an IDR (V4L2_CID_MPEG_VIDEO_FORCE_KEY_FRAME). Others: no effect.
  void forceKeyframe() noexcept { forceKeyframe_ = true; }

 private:
  WireFormat wire_;
  std::unique_ptr<PatternFrames> pattern_;
  std::vector<std::uint8_t> scratch_;  // YUYV render for NV12 / MJPEG
  std::unique_ptr<JpegEncoder> jpeg_;
  std::unique_ptr<H264Encoder> h264_;
  bool keyframe_ = true;
  bool forceKeyframe_ = false;
};

}  // namespace zerohop::camemu
