// H264Encoder for builds without libavcodec (ZEROHOP_WITH_MEDIA=OFF): construction fails with the
// reason, so H.264 is simply not offered (camemu_config.cpp) and never reached.
#include "camemu/h264_encoder.hpp"
#include "zerohop/error.hpp"

namespace zerohop::camemu {

H264Encoder::H264Encoder(std::uint32_t width, std::uint32_t height, std::uint32_t, bool)
    : width_(width), height_(height) {
  throw Error(Errc::kUnsupported,
              "zerohop-camemu was built without libavcodec (ZEROHOP_WITH_MEDIA=OFF): no H.264");
}

H264Encoder::~H264Encoder() = default;

const std::vector<std::uint8_t>& H264Encoder::encode(const std::uint8_t*, std::uint32_t, bool, bool& keyframe) {
  keyframe = false;
  return out_;
}

}  // namespace zerohop::camemu
