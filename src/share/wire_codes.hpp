#pragma once
// The numbers a share puts on its wire (the control block's geometry, each slot's record, a
// Reject's code) are fixed values, listed in docs/share-protocol.md ("Codes"); they are mapped to
// and from the C++ enums value by value, never as ordinals, so reordering a C++ enum cannot change
// the protocol. The static_asserts fail the build when a mapping drifts. Decoders answer nullopt
// for a number the protocol does not define (the caller reports kProtocol).
// Thread-safety: constexpr functions, reentrant.
#include <cstdint>
#include <optional>

#include "zerohop/error.hpp"
#include "zerohop/frame.hpp"
#include "zerohop/pixel_format.hpp"

namespace zerohop::share_detail {

// ---- pixel formats (RingGeometry::format, SlotRecord::format) ----
inline constexpr std::uint32_t kWireFormatUnknown = 0;
inline constexpr std::uint32_t kWireFormatYuyv = 1;
inline constexpr std::uint32_t kWireFormatUyvy = 2;
inline constexpr std::uint32_t kWireFormatNv12 = 3;
inline constexpr std::uint32_t kWireFormatI420 = 4;
inline constexpr std::uint32_t kWireFormatRgb24 = 5;
inline constexpr std::uint32_t kWireFormatBgrx = 6;
inline constexpr std::uint32_t kWireFormatRgba = 7;
inline constexpr std::uint32_t kWireFormatMjpeg = 8;
inline constexpr std::uint32_t kWireFormatH264 = 9;
// 10 was VP8, which no ring ever held (VP8 is a Codec, not a PixelFormat): read as no format, never reused.
inline constexpr std::uint32_t kWireFormatRetiredVp8 = 10;
inline constexpr std::uint32_t kWireFormatOpus = 11;

constexpr std::uint32_t formatToWire(PixelFormat f) noexcept {
  switch (f) {
    case PixelFormat::kUnknown:
      break;
    case PixelFormat::kYUYV:
      return kWireFormatYuyv;
    case PixelFormat::kUYVY:
      return kWireFormatUyvy;
    case PixelFormat::kNV12:
      return kWireFormatNv12;
    case PixelFormat::kI420:
      return kWireFormatI420;
    case PixelFormat::kRGB24:
      return kWireFormatRgb24;
    case PixelFormat::kBGRx:
      return kWireFormatBgrx;
    case PixelFormat::kRGBA:
      return kWireFormatRgba;
    case PixelFormat::kMJPEG:
      return kWireFormatMjpeg;
    case PixelFormat::kH264:
      return kWireFormatH264;
    case PixelFormat::kOpus:
      return kWireFormatOpus;
  }
  return kWireFormatUnknown;
}

constexpr std::optional<PixelFormat> formatFromWire(std::uint32_t code) noexcept {
  switch (code) {
    case kWireFormatUnknown:
      return PixelFormat::kUnknown;
    case kWireFormatYuyv:
      return PixelFormat::kYUYV;
    case kWireFormatUyvy:
      return PixelFormat::kUYVY;
    case kWireFormatNv12:
      return PixelFormat::kNV12;
    case kWireFormatI420:
      return PixelFormat::kI420;
    case kWireFormatRgb24:
      return PixelFormat::kRGB24;
    case kWireFormatBgrx:
      return PixelFormat::kBGRx;
    case kWireFormatRgba:
      return PixelFormat::kRGBA;
    case kWireFormatMjpeg:
      return PixelFormat::kMJPEG;
    case kWireFormatH264:
      return PixelFormat::kH264;
    case kWireFormatOpus:
      return PixelFormat::kOpus;
    default:
      return std::nullopt;
  }
}

// ---- memory (RingGeometry::memory, SlotRecord::memory) ----
inline constexpr std::uint32_t kWireMemoryHost = 0;
inline constexpr std::uint32_t kWireMemoryPinned = 1;
inline constexpr std::uint32_t kWireMemoryDevice = 2;

constexpr std::uint32_t memoryToWire(MemoryKind m) noexcept {
  switch (m) {
    case MemoryKind::kHost:
      break;
    case MemoryKind::kPinned:
      return kWireMemoryPinned;
    case MemoryKind::kDevice:
      return kWireMemoryDevice;
  }
  return kWireMemoryHost;
}

constexpr std::optional<MemoryKind> memoryFromWire(std::uint32_t code) noexcept {
  switch (code) {
    case kWireMemoryHost:
      return MemoryKind::kHost;
    case kWireMemoryPinned:
      return MemoryKind::kPinned;
    case kWireMemoryDevice:
      return MemoryKind::kDevice;
    default:
      return std::nullopt;
  }
}

// ---- colour (SlotRecord::matrix, SlotRecord::range) ----
inline constexpr std::uint8_t kWireMatrixBt601 = 0;
inline constexpr std::uint8_t kWireMatrixBt709 = 1;
inline constexpr std::uint8_t kWireRangeLimited = 0;
inline constexpr std::uint8_t kWireRangeFull = 1;

constexpr std::uint8_t matrixToWire(ColorMatrix m) noexcept {
  return m == ColorMatrix::kBt709 ? kWireMatrixBt709 : kWireMatrixBt601;
}
constexpr std::optional<ColorMatrix> matrixFromWire(std::uint8_t code) noexcept {
  if (code == kWireMatrixBt601) return ColorMatrix::kBt601;
  if (code == kWireMatrixBt709) return ColorMatrix::kBt709;
  return std::nullopt;
}
constexpr std::uint8_t rangeToWire(ColorRange r) noexcept {
  return r == ColorRange::kFull ? kWireRangeFull : kWireRangeLimited;
}
constexpr std::optional<ColorRange> rangeFromWire(std::uint8_t code) noexcept {
  if (code == kWireRangeLimited) return ColorRange::kLimited;
  if (code == kWireRangeFull) return ColorRange::kFull;
  return std::nullopt;
}

// ---- error categories (Reject::code) ----
constexpr std::uint32_t errcToWire(Errc e) noexcept {
  switch (e) {
    case Errc::kInvalidArgument:
      return 0;
    case Errc::kNotFound:
      return 1;
    case Errc::kUnavailable:
      return 2;
    case Errc::kUnsupported:
      return 3;
    case Errc::kIo:
      return 4;
    case Errc::kDevice:
      return 5;
    case Errc::kProtocol:
      return 6;
    case Errc::kTimeout:
      return 7;
    case Errc::kInternal:
      return 8;
  }
  return 6;  // kProtocol
}
/// A code this build does not know reads as kProtocol (a newer peer's category).
constexpr Errc errcFromWire(std::uint32_t code) noexcept {
  switch (code) {
    case 0:
      return Errc::kInvalidArgument;
    case 1:
      return Errc::kNotFound;
    case 2:
      return Errc::kUnavailable;
    case 3:
      return Errc::kUnsupported;
    case 4:
      return Errc::kIo;
    case 5:
      return Errc::kDevice;
    case 6:
      return Errc::kProtocol;
    case 7:
      return Errc::kTimeout;
    case 8:
      return Errc::kInternal;
    default:
      return Errc::kProtocol;
  }
}

// Every value survives the round trip: the mappings are each other's inverse.
constexpr bool wireCodesRoundTrip() {
  for (std::uint32_t c = kWireFormatUnknown; c <= kWireFormatOpus; ++c) {
    const auto f = formatFromWire(c);
    if (c == kWireFormatRetiredVp8) {
      if (f) return false;
      continue;
    }
    if (!f || formatToWire(*f) != c) return false;
  }
  for (std::uint32_t c = kWireMemoryHost; c <= kWireMemoryDevice; ++c) {
    const auto m = memoryFromWire(c);
    if (!m || memoryToWire(*m) != c) return false;
  }
  for (std::uint32_t c = 0; c <= 8; ++c)
    if (errcToWire(errcFromWire(c)) != c) return false;
  return !formatFromWire(kWireFormatOpus + 1) && !memoryFromWire(kWireMemoryDevice + 1) &&
         matrixFromWire(matrixToWire(ColorMatrix::kBt709)) == ColorMatrix::kBt709 &&
         rangeFromWire(rangeToWire(ColorRange::kFull)) == ColorRange::kFull && !matrixFromWire(2) &&
         !rangeFromWire(2);
}
static_assert(wireCodesRoundTrip(),
              "a share wire code mapping drifted: fix it, never renumber (docs/share-protocol.md)");
// The numbers protocol v1 readers in the field expect: changing one needs a new protocol version.
static_assert(kWireFormatNv12 == 3 && kWireFormatH264 == 9 && kWireMemoryDevice == 2 &&
              errcToWire(Errc::kUnavailable) == 2 && errcToWire(Errc::kProtocol) == 6);

}  // namespace zerohop::share_detail
