#pragma once
// Where a codec meets a pixel format: an encoded share's slots are described by a PixelFormat, encoded
// units by a Codec. H.264 and Opus are both; VP8 is a codec only (no share carries it).
// Thread-safety: constexpr functions, reentrant.
#include "zerohop/codec.hpp"
#include "zerohop/pixel_format.hpp"

namespace zerohop {

/// The format of a share's slot holding `codec`'s units; kUnknown for VP8.
constexpr PixelFormat formatOfCodec(Codec codec) noexcept {
  switch (codec) {
    case Codec::kH264:
      return PixelFormat::kH264;
    case Codec::kOpus:
      return PixelFormat::kOpus;
    case Codec::kVP8:
      break;
  }
  return PixelFormat::kUnknown;
}

}  // namespace zerohop
