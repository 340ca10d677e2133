#include "camemu/frame_synth.hpp"

#include <cstring>

#include "camemu/h264_encoder.hpp"
#include "camemu/jpeg_encoder.hpp"
#include "source/pattern_frames.hpp"
#include "zerohop/error.hpp"
#include "zerohop/timecode.hpp"

namespace zerohop::camemu {
namespace {

Frame packedFrame(PixelFormat format, std::uint32_t width, std::uint32_t height, std::uint8_t* base) {
  Frame f;
  bindLayout(f, computeLayout(format, width, height), base, MemoryKind::kHost);
  return f;
}

// YUYV (pitch width*2) -> NV12: luma copied, chroma averaged over each pair of rows.
void yuyvToNv12(const std::uint8_t* src, std::uint32_t width, std::uint32_t height, std::uint8_t* dst) {
  std::uint8_t* uv = dst + std::size_t{width} * height;
  const std::size_t pitch = std::size_t{width} * 2;
  for (std::uint32_t row = 0; row < height; ++row) {
    const std::uint8_t* s = src + row * pitch;
    std::uint8_t* y = dst + std::size_t{row} * width;
    for (std::uint32_t x = 0; x < width; ++x) y[x] = s[2 * x];
    if (row % 2 == 0) {
      const std::uint8_t* s2 = s + pitch;
      std::uint8_t* c = uv + std::size_t{row / 2} * width;
      for (std::uint32_t x = 0; x < width; x += 2) {
        c[x] = static_cast<std::uint8_t>((s[2 * x + 1] + s2[2 * x + 1] + 1) / 2);
        c[x + 1] = static_cast<std::uint8_t>((s[2 * x + 3] + s2[2 * x + 3] + 1) / 2);
      }
    }
  }
}

}  // namespace

FrameSynth::FrameSynth(const WireFormat& wire, std::uint32_t fps, bool h264HeadersEveryIdr) : wire_(wire) {
  const bool packed = wire.format == PixelFormat::kYUYV || wire.format == PixelFormat::kUYVY;
  pattern_ =
      std::make_unique<PatternFrames>(packed ? wire.format : PixelFormat::kYUYV, wire.width, wire.height);
  if (!packed) scratch_.resize(std::size_t{wire.width} * 2 * wire.height);
  if (wire.format == PixelFormat::kMJPEG) {
    jpeg_ = std::make_unique<JpegEncoder>(wire.width, wire.height);
  } else if (wire.format == PixelFormat::kH264) {
    h264_ = std::make_unique<H264Encoder>(wire.width, wire.height, fps, h264HeadersEveryIdr);
  } else if (!packed && wire.format != PixelFormat::kNV12) {
    throw Error(Errc::kUnsupported, "zerohop-camemu cannot produce " + std::string(formatName(wire.format)));
  }
}

FrameSynth::~FrameSynth() = default;

std::size_t FrameSynth::render(std::uint64_t sequence, std::int64_t wallClockMs, std::uint8_t* dst,
                               std::size_t capacity) {
  const Timecode tc{static_cast<std::uint64_t>(wallClockMs), static_cast<std::uint32_t>(sequence)};
  switch (wire_.format) {
    case PixelFormat::kYUYV:
    case PixelFormat::kUYVY: {
      if (capacity < wire_.sizeImage) return 0;
      Frame f = packedFrame(wire_.format, wire_.width, wire_.height, dst);
      pattern_->render(f, sequence, tc);
      return wire_.sizeImage;
    }
    case PixelFormat::kNV12: {
      if (capacity < wire_.sizeImage) return 0;
      Frame src = packedFrame(PixelFormat::kYUYV, wire_.width, wire_.height, scratch_.data());
      pattern_->render(src, sequence, tc);
      yuyvToNv12(scratch_.data(), wire_.width, wire_.height, dst);
      Frame out = packedFrame(PixelFormat::kNV12, wire_.width, wire_.height, dst);
      drawTimecode(out, tc);  // exact strip, not a chroma-averaged copy
      return wire_.sizeImage;
    }
    case PixelFormat::kH264: {
      Frame src = packedFrame(PixelFormat::kYUYV, wire_.width, wire_.height, scratch_.data());
      pattern_->render(src, sequence, tc);
      const auto& au = h264_->encode(scratch_.data(), wire_.width * 2, forceKeyframe_, keyframe_);
      forceKeyframe_ = false;
      if (au.size() > capacity) return 0;
      std::memcpy(dst, au.data(), au.size());
      return au.size();
    }
    default: {
      Frame src = packedFrame(PixelFormat::kYUYV, wire_.width, wire_.height, scratch_.data());
      pattern_->render(src, sequence, tc);
      const auto& jpeg = jpeg_->encode(scratch_.data(), wire_.width * 2);
      if (jpeg.size() > capacity) return 0;
      std::memcpy(dst, jpeg.data(), jpeg.size());
      return jpeg.size();
    }
  }
}

}  // namespace zerohop::camemu
