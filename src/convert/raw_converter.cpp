#include "raw_converter.hpp"

#include <libyuv/convert.h>
#include <libyuv/convert_from.h>
#include <libyuv/convert_from_argb.h>
#include <libyuv/planar_functions.h>

#include <string>

#include "zerohop/error.hpp"

namespace zerohop::convert {
namespace {

// libyuv names packed RGB formats by their value in a little-endian word, so its names read
// backwards against memory order (and against V4L2/FFmpeg names):
//   our RGB24 (memory R,G,B)    = libyuv "RAW"   (libyuv "RGB24" is memory B,G,R)
//   our BGRx  (memory B,G,R,x)  = libyuv "ARGB"
//   our RGBA  (memory R,G,B,A)  = libyuv "ABGR"
void check(int rc, const char* call) {
  if (rc != 0) {
    throw Error(
        Errc::kInvalidArgument,
        std::string("libyuv ") + call + " rejected the frame geometry (returned " + std::to_string(rc) + ")");
  }
}

int s(std::uint32_t pitch) {
  return static_cast<int>(pitch);
}

}  // namespace

bool isRawSource(PixelFormat format) noexcept {
  switch (format) {
    case PixelFormat::kYUYV:
    case PixelFormat::kUYVY:
    case PixelFormat::kNV12:
    case PixelFormat::kI420:
    case PixelFormat::kRGB24:
    case PixelFormat::kBGRx:
    case PixelFormat::kRGBA:
      return true;
    default:
      return false;
  }
}

void RawConverter::convert(const Frame& src, Frame& dst) {
  const int w = static_cast<int>(src.width);
  const int h = static_cast<int>(src.height);
  const auto* s0 = src.data[0];
  auto* y = dst.data[0];
  const int ys = s(dst.pitch[0]);

  if (dst.format == PixelFormat::kI420) {
    auto* u = dst.data[1];
    auto* v = dst.data[2];
    const int us = s(dst.pitch[1]);
    const int vs = s(dst.pitch[2]);
    switch (src.format) {
      case PixelFormat::kYUYV:
        return check(libyuv::YUY2ToI420(s0, s(src.pitch[0]), y, ys, u, us, v, vs, w, h), "YUY2ToI420");
      case PixelFormat::kUYVY:
        return check(libyuv::UYVYToI420(s0, s(src.pitch[0]), y, ys, u, us, v, vs, w, h), "UYVYToI420");
      case PixelFormat::kNV12:
        return check(
            libyuv::NV12ToI420(s0, s(src.pitch[0]), src.data[1], s(src.pitch[1]), y, ys, u, us, v, vs, w, h),
            "NV12ToI420");
      case PixelFormat::kI420:
        return check(libyuv::I420Copy(s0, s(src.pitch[0]), src.data[1], s(src.pitch[1]), src.data[2],
                                      s(src.pitch[2]), y, ys, u, us, v, vs, w, h),
                     "I420Copy");
      case PixelFormat::kRGB24:
        return check(libyuv::RAWToI420(s0, s(src.pitch[0]), y, ys, u, us, v, vs, w, h), "RAWToI420");
      case PixelFormat::kBGRx:
        return check(libyuv::ARGBToI420(s0, s(src.pitch[0]), y, ys, u, us, v, vs, w, h), "ARGBToI420");
      case PixelFormat::kRGBA:
        return check(libyuv::ABGRToI420(s0, s(src.pitch[0]), y, ys, u, us, v, vs, w, h), "ABGRToI420");
      default:
        break;
    }
  } else if (dst.format == PixelFormat::kNV12) {
    auto* uv = dst.data[1];
    const int uvs = s(dst.pitch[1]);
    switch (src.format) {
      case PixelFormat::kYUYV:
        return check(libyuv::YUY2ToNV12(s0, s(src.pitch[0]), y, ys, uv, uvs, w, h), "YUY2ToNV12");
      case PixelFormat::kUYVY:
        return check(libyuv::UYVYToNV12(s0, s(src.pitch[0]), y, ys, uv, uvs, w, h), "UYVYToNV12");
      case PixelFormat::kNV12:
        libyuv::CopyPlane(s0, s(src.pitch[0]), y, ys, w, h);
        libyuv::CopyPlane(src.data[1], s(src.pitch[1]), uv, uvs, (w + 1) / 2 * 2, (h + 1) / 2);
        return;
      case PixelFormat::kI420:
        return check(libyuv::I420ToNV12(s0, s(src.pitch[0]), src.data[1], s(src.pitch[1]), src.data[2],
                                        s(src.pitch[2]), y, ys, uv, uvs, w, h),
                     "I420ToNV12");
      case PixelFormat::kRGB24: {  // libyuv has no RAWToNV12: luma straight to dst, chroma via scratch
        const int w2 = (w + 1) / 2;
        const int h2 = (h + 1) / 2;
        chroma_.resize(static_cast<std::size_t>(w2) * h2 * 2);
        auto* u = chroma_.data();
        auto* v = u + static_cast<std::size_t>(w2) * h2;
        check(libyuv::RAWToI420(s0, s(src.pitch[0]), y, ys, u, w2, v, w2, w, h), "RAWToI420");
        libyuv::MergeUVPlane(u, w2, v, w2, uv, uvs, w2, h2);
        return;
      }
      case PixelFormat::kBGRx:
        return check(libyuv::ARGBToNV12(s0, s(src.pitch[0]), y, ys, uv, uvs, w, h), "ARGBToNV12");
      case PixelFormat::kRGBA:
        return check(libyuv::ABGRToNV12(s0, s(src.pitch[0]), y, ys, uv, uvs, w, h), "ABGRToNV12");
      default:
        break;
    }
  }
  throw Error(Errc::kUnsupported, "no CPU conversion from " + std::string(formatName(src.format)) + " to " +
                                      std::string(formatName(dst.format)) +
                                      "; the converter writes i420 or nv12");
}

}  // namespace zerohop::convert
