#pragma once
// Encodes YUYV frames into an H.264 Annex B stream the way a UVC 1.5 camera delivers it: one access
// unit per frame, no B-frames, SPS/PPS repeated before every IDR (or, with headersEveryIdr false,
// only before the first, as some cameras do), an IDR every second and on request.
// libavcodec + libx264; built only with ZEROHOP_WITH_MEDIA (ZEROHOP_CAMEMU_WITH_H264).
// Thread-safety: thread-bound (one encoder per stream); owns its codec context, frame and packet.

#include <cstdint>
#include <vector>

struct AVCodecContext;
struct AVFrame;
struct AVPacket;

namespace zerohop::camemu {

class H264Encoder {
 public:
  /// Throws Error(kUnsupported) when libavcodec has no libx264, kDevice on other codec errors.
  H264Encoder(std::uint32_t width, std::uint32_t height, std::uint32_t fps, bool headersEveryIdr = true);
  ~H264Encoder();
  H264Encoder(const H264Encoder&) = delete;
  H264Encoder& operator=(const H264Encoder&) = delete;

  /// Encodes one YUYV image (`pitch` bytes a row); returns its access unit (valid until the next
  /// call; empty if the encoder produced none) and sets `keyframe` for an IDR. `forceIdr` makes it one.
  const std::vector<std::uint8_t>& encode(const std::uint8_t* yuyv, std::uint32_t pitch, bool forceIdr,
                                          bool& keyframe);

 private:
  std::uint32_t width_;
  std::uint32_t height_;
  AVCodecContext* ctx_ = nullptr;
  AVFrame* frame_ = nullptr;
  AVPacket* packet_ = nullptr;
  std::int64_t pts_ = 0;
  std::vector<std::uint8_t> headers_;  // SPS/PPS to put before the first access unit (headers once)
  std::vector<std::uint8_t> out_;
};

}  // namespace zerohop::camemu
