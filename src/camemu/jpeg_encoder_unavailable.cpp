// JpegEncoder for builds without libjpeg-turbo (ZEROHOP_WITH_MEDIA=OFF): construction fails with
// the reason, so MJPEG is simply not offered (camemu_config.cpp) and never reached.
#include "camemu/jpeg_encoder.hpp"
#include "zerohop/error.hpp"

namespace zerohop::camemu {

struct JpegEncoder::Compressor {};  // never made: the constructor throws

JpegEncoder::JpegEncoder(std::uint32_t width, std::uint32_t height, int quality)
    : width_(width), height_(height), quality_(quality) {
  throw Error(Errc::kUnsupported,
              "zerohop-camemu was built without libjpeg-turbo (ZEROHOP_WITH_MEDIA=OFF): no MJPEG");
}

JpegEncoder::~JpegEncoder() = default;

const std::vector<std::uint8_t>& JpegEncoder::encode(const std::uint8_t*, std::uint32_t) {
  return out_;
}

}  // namespace zerohop::camemu
