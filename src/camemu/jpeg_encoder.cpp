#include "camemu/jpeg_encoder.hpp"

#include <turbojpeg.h>

#include <string>

#include "zerohop/error.hpp"

namespace zerohop::camemu {

JpegEncoder::JpegEncoder(std::uint32_t width, std::uint32_t height, int quality)
    : width_(width), height_(height), quality_(quality) {
  handle_ = tjInitCompress();
  if (!handle_) throw Error(Errc::kDevice, std::string("tjInitCompress failed: ") + tjGetErrorStr2(nullptr));
  y_.resize(std::size_t{width} * height);
  u_.resize(std::size_t{width / 2} * height);
  v_.resize(std::size_t{width / 2} * height);
  tjCap_ = tjBufSize(static_cast<int>(width), static_cast<int>(height), TJSAMP_422);
  tjBuf_ = tjAlloc(static_cast<int>(tjCap_));
  if (!tjBuf_) {
    tjDestroy(handle_);
    throw Error(Errc::kUnavailable, "tjAlloc(" + std::to_string(tjCap_) + ") failed");
  }
}

JpegEncoder::~JpegEncoder() {
  tjFree(tjBuf_);
  tjDestroy(handle_);
}

const std::vector<std::uint8_t>& JpegEncoder::encode(const std::uint8_t* yuyv, std::uint32_t pitch) {
  // De-interleave YUYV into the planar 4:2:2 layout libjpeg-turbo compresses without resampling.
  const std::uint32_t cw = width_ / 2;
  for (std::uint32_t row = 0; row < height_; ++row) {
    const std::uint8_t* s = yuyv + std::size_t{row} * pitch;
    std::uint8_t* y = y_.data() + std::size_t{row} * width_;
    std::uint8_t* u = u_.data() + std::size_t{row} * cw;
    std::uint8_t* v = v_.data() + std::size_t{row} * cw;
    for (std::uint32_t i = 0; i < cw; ++i, s += 4) {
      y[2 * i] = s[0];
      u[i] = s[1];
      y[2 * i + 1] = s[2];
      v[i] = s[3];
    }
  }
  const unsigned char* planes[3] = {y_.data(), u_.data(), v_.data()};
  const int strides[3] = {static_cast<int>(width_), static_cast<int>(cw), static_cast<int>(cw)};
  unsigned char* buf = tjBuf_;
  unsigned long size = tjCap_;
  if (tjCompressFromYUVPlanes(handle_, planes, static_cast<int>(width_), strides, static_cast<int>(height_),
                              TJSAMP_422, &buf, &size, quality_, TJFLAG_NOREALLOC | TJFLAG_FASTDCT) != 0) {
    throw Error(Errc::kDevice, std::string("tjCompressFromYUVPlanes failed: ") + tjGetErrorStr2(handle_));
  }
  out_.assign(buf, buf + size);
  return out_;
}

}  // namespace zerohop::camemu
