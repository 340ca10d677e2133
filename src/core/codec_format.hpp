#pragma once
// Where a codec meets a pixel format: an encoded share's slots (and a camera's compressed frames) are
// described by a PixelFormat, encoded units by a Codec. H.264 and Opus are both; VP8 is a codec only
// (no share or camera carries it).
// Thread-safety: constexpr functions, reentrant.
#include <optional>

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

/// The codec of a compressed frame's bytes (a camera's H.264, a share's Opus); nullopt for pictures and
/// MJPEG.
constexpr std::optional<Codec> codecOfFormat(PixelFormat format) noexcept {
  switch (format) {
    case PixelFormat::kH264:
      return Codec::kH264;
    case PixelFormat::kOpus:
      return Codec::kOpus;
    default:
      return std::nullopt;
  }
}

}  // namespace zerohop
