// The CPU FrameScaler: libyuv's I420Scale (NV12Scale for NV12, then its chroma de-interleaved) with
// the box filter, which has SIMD paths for the ladder's exact 1/2 and 1/4.
#include <libyuv/planar_functions.h>
#include <libyuv/scale.h>

#include <string>
#include <vector>

#include "convert/converter.hpp"
#include "zerohop/error.hpp"

namespace zerohop {
namespace {

bool hostMemory(const Frame& f) { return f.memory == MemoryKind::kHost || f.memory == MemoryKind::kPinned; }

// Thread-bound: NV12 input goes through a scratch NV12 plane pair at the destination size.
class CpuScaler final : public FrameScaler {
 public:
  void scale(const Frame& src, Frame& dst) override {
    if ((src.format != PixelFormat::kI420 && src.format != PixelFormat::kNV12) || dst.format != PixelFormat::kI420) {
      throw Error(Errc::kUnsupported, "the CPU scaler takes i420 or nv12 to i420, not " +
                                          std::string(formatName(src.format)) + " to " + std::string(formatName(dst.format)));
    }
    if (!hostMemory(src) || !hostMemory(dst)) {
      throw Error(Errc::kUnsupported, "the CPU scaler reads and writes host memory only; a GPU frame needs a GPU scaler");
    }
    if (dst.width == 0 || dst.height == 0 || dst.width % 2 || dst.height % 2) {
      throw Error(Errc::kInvalidArgument, "a 4:2:0 destination needs an even size, got " + std::to_string(dst.width) +
                                              "x" + std::to_string(dst.height));
    }
    const int sw = static_cast<int>(src.width), sh = static_cast<int>(src.height);
    const int dw = static_cast<int>(dst.width), dh = static_cast<int>(dst.height);
    int rc = 0;
    if (src.format == PixelFormat::kI420) {
      rc = libyuv::I420Scale(src.data[0], static_cast<int>(src.pitch[0]), src.data[1], static_cast<int>(src.pitch[1]),
                             src.data[2], static_cast<int>(src.pitch[2]), sw, sh, dst.data[0],
                             static_cast<int>(dst.pitch[0]), dst.data[1], static_cast<int>(dst.pitch[1]), dst.data[2],
                             static_cast<int>(dst.pitch[2]), dw, dh, libyuv::kFilterBox);
    } else {
      uv_.resize(static_cast<std::size_t>(dw) * (dh / 2));
      rc = libyuv::NV12Scale(src.data[0], static_cast<int>(src.pitch[0]), src.data[1], static_cast<int>(src.pitch[1]), sw,
                             sh, dst.data[0], static_cast<int>(dst.pitch[0]), uv_.data(), dw, dw, dh, libyuv::kFilterBox);
      if (rc == 0) {
        libyuv::SplitUVPlane(uv_.data(), dw, dst.data[1], static_cast<int>(dst.pitch[1]), dst.data[2],
                             static_cast<int>(dst.pitch[2]), dw / 2, dh / 2);
      }
    }
    if (rc != 0) {
      throw Error(Errc::kInvalidArgument, "libyuv scale " + std::to_string(sw) + "x" + std::to_string(sh) + " -> " +
                                              std::to_string(dw) + "x" + std::to_string(dh) + " failed (" +
                                              std::to_string(rc) + "): check the frames' planes and pitches");
    }
    dst.sequence = src.sequence;
    dst.wallClockMs = src.wallClockMs;
    dst.times = src.times;
    dst.color = src.color;
  }

 private:
  std::vector<std::uint8_t> uv_;  // NV12 input: the scaled interleaved chroma
};

}  // namespace

std::unique_ptr<FrameScaler> makeCpuScaler() { return std::make_unique<CpuScaler>(); }

}  // namespace zerohop
