#include "gpu/jpeg_plan.hpp"

#include <string>

#include "zerohop/error.hpp"

namespace zerohop::jpeg {
namespace {

std::string geometryText(const Geometry& g) {
  return std::to_string(g.width) + "x" + std::to_string(g.height) + ", " + std::to_string(g.components) +
         " components, chroma " + std::to_string(g.chromaWidth) + "x" + std::to_string(g.chromaHeight);
}

// 1 or 2 when `chroma` samples cover `out` output samples that way; 0 otherwise.
std::uint32_t factor(std::uint32_t chroma, std::uint32_t out) {
  if (chroma == out) return 1;
  if (chroma == 2 * out) return 2;
  return 0;
}

}  // namespace

ChromaPlan planChroma(const Geometry& g, PixelFormat dst, std::uint32_t dstWidth, std::uint32_t dstHeight) {
  if (dst != PixelFormat::kNV12 && dst != PixelFormat::kI420) {
    throw Error(Errc::kInvalidArgument,
                "GpuJpegDecoder: destination must be NV12 or I420, got " + std::string(formatName(dst)));
  }
  if (g.width != dstWidth || g.height != dstHeight) {
    throw Error(Errc::kInvalidArgument, "GpuJpegDecoder: the JPEG is " + std::to_string(g.width) + "x" +
                                            std::to_string(g.height) + " but the destination is " +
                                            std::to_string(dstWidth) + "x" + std::to_string(dstHeight));
  }
  if (g.width == 0 || g.height == 0 || (g.width % 2) != 0 || (g.height % 2) != 0) {
    throw Error(Errc::kInvalidArgument,
                "GpuJpegDecoder: 4:2:0 output needs an even width and height, the JPEG is " + geometryText(g));
  }
  ChromaPlan plan;
  if (g.components == 1) {
    plan.kind = ChromaPlan::Kind::kGrey;
    return plan;
  }
  if (g.components != 3) {
    throw Error(Errc::kUnsupported, "GpuJpegDecoder: only greyscale and Y Cb Cr JPEGs, got " + geometryText(g));
  }
  const std::uint32_t ow = g.width / 2, oh = g.height / 2;
  plan.sx = factor(g.chromaWidth, ow);
  plan.sy = factor(g.chromaHeight, oh);
  if (plan.sx == 0 || plan.sy == 0) {
    throw Error(Errc::kUnsupported,
                "GpuJpegDecoder: chroma subsampling not supported (needs 4:2:0, 4:2:2, 4:4:0 or 4:4:4): " +
                    geometryText(g));
  }
  if (plan.sx == 1 && plan.sy == 1 && dst == PixelFormat::kI420) {
    plan.kind = ChromaPlan::Kind::kDirect;
    return plan;
  }
  plan.kind = ChromaPlan::Kind::kResample;
  plan.scratchPitch = (g.chromaWidth + 255u) / 256u * 256u;
  plan.scratchRows = g.chromaHeight;
  plan.scratchBytes = std::size_t(plan.scratchPitch) * plan.scratchRows * 2;
  return plan;
}

}  // namespace zerohop::jpeg
