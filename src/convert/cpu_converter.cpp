// The CPU FrameConverter: validates both frames, then hands raw formats to RawConverter (libyuv)
// and MJPEG to MjpegDecoder (libjpeg-turbo + libyuv).
#include <string>

#include "frame_check.hpp"
#include "mjpeg_decoder.hpp"
#include "raw_converter.hpp"
#include "zerohop/clock.hpp"
#include "convert/converter.hpp"
#include "zerohop/error.hpp"

namespace zerohop {
namespace {

// Thread-bound: owns a JPEG decoder and scratch planes.
class CpuConverter final : public FrameConverter {
 public:
  void convert(const Frame& src, Frame& dst) override {
    if (dst.format != PixelFormat::kI420 && dst.format != PixelFormat::kNV12) {
      throw Error(Errc::kUnsupported,
                  "the CPU converter writes i420 or nv12, not " + std::string(formatName(dst.format)));
    }
    if (src.width != dst.width || src.height != dst.height) {
      throw Error(Errc::kUnsupported, "scaling is not supported: source " + std::to_string(src.width) + "x" +
                                          std::to_string(src.height) + ", destination " +
                                          std::to_string(dst.width) + "x" + std::to_string(dst.height) +
                                          "; give both frames the same size");
    }
    if (src.width % 2 != 0 || src.height % 2 != 0) {
      throw Error(Errc::kInvalidArgument, "4:2:0 output needs an even size, got " +
                                              std::to_string(src.width) + "x" + std::to_string(src.height));
    }
    convert::requireHostMemory(src, "source");
    convert::requireHostMemory(dst, "destination");
    convert::requireRawPlanes(dst, "destination");

    if (src.format == PixelFormat::kMJPEG) {
      convert::requirePayload(src, "source");
      name_ = "libjpeg-turbo+libyuv";
      jpeg_.decode(src.data[0], src.bytesUsed, dst);
      dst.color = ColorDesc{ColorMatrix::kBt601, ColorRange::kFull};  // JFIF
    } else if (convert::isRawSource(src.format)) {
      convert::requireRawPlanes(src, "source");
      name_ = "libyuv";
      raw_.convert(src, dst);
      const bool rgb = src.format == PixelFormat::kRGB24 || src.format == PixelFormat::kBGRx ||
                       src.format == PixelFormat::kRGBA;
      dst.color = rgb ? ColorDesc{ColorMatrix::kBt601, ColorRange::kLimited} : src.color;
    } else {
      throw Error(Errc::kUnsupported,
                  "the CPU converter cannot read " + std::string(formatName(src.format)) +
                      " frames (it reads yuyv, uyvy, nv12, i420, rgb24, bgrx, rgba, mjpeg)");
    }
    dst.sequence = src.sequence;
    dst.wallClockMs = src.wallClockMs;
    dst.times = src.times;
    dst.keyframe = true;
    dst.times.mark(Stage::kConvert, monotonicNs());
  }

  const char* name() const noexcept override { return name_; }

 private:
  convert::RawConverter raw_;
  convert::MjpegDecoder jpeg_;
  const char* name_ = "libyuv";
};

}  // namespace

std::unique_ptr<FrameConverter> makeCpuConverter() {
  return std::make_unique<CpuConverter>();
}

}  // namespace zerohop
