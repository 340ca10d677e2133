#pragma once
// The C API's enums are fixed numbers (zerohop.h writes each one down): zh_format, zh_memory,
// zh_stage and zh_log_level map to and from the C++ enums value by value, never by casting an
// ordinal, so reordering a C++ enum cannot change the ABI. The static_asserts below fail the build
// when a number or a mapping drifts. A C value with no mapping is nullopt: the caller answers
// ZH_ERR_INVALID_ARGUMENT.
// Thread-safety: constexpr functions, reentrant.
#include <cstddef>
#include <optional>

#include "zerohop/frame.hpp"
#include "zerohop/log.hpp"
#include "zerohop/pixel_format.hpp"
#include "zerohop/zerohop.h"

namespace zerohop::capi {

/// zh_format -> PixelFormat; nullopt for ZH_FORMAT_UNKNOWN and numbers zh_format does not define.
constexpr std::optional<PixelFormat> formatFromC(zh_format f) noexcept {
  switch (f) {
    case ZH_FORMAT_YUYV:
      return PixelFormat::kYUYV;
    case ZH_FORMAT_UYVY:
      return PixelFormat::kUYVY;
    case ZH_FORMAT_NV12:
      return PixelFormat::kNV12;
    case ZH_FORMAT_I420:
      return PixelFormat::kI420;
    case ZH_FORMAT_RGB24:
      return PixelFormat::kRGB24;
    case ZH_FORMAT_BGRX:
      return PixelFormat::kBGRx;
    case ZH_FORMAT_RGBA:
      return PixelFormat::kRGBA;
    case ZH_FORMAT_MJPEG:
      return PixelFormat::kMJPEG;
    case ZH_FORMAT_H264:
      return PixelFormat::kH264;
    case ZH_FORMAT_OPUS:
      return PixelFormat::kOpus;
    default:
      return std::nullopt;
  }
}

/// PixelFormat -> zh_format; kUnknown is ZH_FORMAT_UNKNOWN.
constexpr zh_format formatToC(PixelFormat f) noexcept {
  switch (f) {
    case PixelFormat::kYUYV:
      return ZH_FORMAT_YUYV;
    case PixelFormat::kUYVY:
      return ZH_FORMAT_UYVY;
    case PixelFormat::kNV12:
      return ZH_FORMAT_NV12;
    case PixelFormat::kI420:
      return ZH_FORMAT_I420;
    case PixelFormat::kRGB24:
      return ZH_FORMAT_RGB24;
    case PixelFormat::kBGRx:
      return ZH_FORMAT_BGRX;
    case PixelFormat::kRGBA:
      return ZH_FORMAT_RGBA;
    case PixelFormat::kMJPEG:
      return ZH_FORMAT_MJPEG;
    case PixelFormat::kH264:
      return ZH_FORMAT_H264;
    case PixelFormat::kOpus:
      return ZH_FORMAT_OPUS;
    case PixelFormat::kUnknown:
      break;
  }
  return ZH_FORMAT_UNKNOWN;
}

constexpr std::optional<MemoryKind> memoryFromC(zh_memory m) noexcept {
  switch (m) {
    case ZH_MEMORY_HOST:
      return MemoryKind::kHost;
    case ZH_MEMORY_PINNED:
      return MemoryKind::kPinned;
    case ZH_MEMORY_DEVICE:
      return MemoryKind::kDevice;
    default:
      return std::nullopt;
  }
}

constexpr zh_memory memoryToC(MemoryKind m) noexcept {
  switch (m) {
    case MemoryKind::kHost:
      break;
    case MemoryKind::kPinned:
      return ZH_MEMORY_PINNED;
    case MemoryKind::kDevice:
      return ZH_MEMORY_DEVICE;
  }
  return ZH_MEMORY_HOST;
}

/// The Stage whose time stage_ns[s] holds.
constexpr Stage stageFromC(zh_stage s) noexcept {
  switch (s) {
    case ZH_STAGE_CAPTURE:
      return Stage::kCapture;
    case ZH_STAGE_INGEST:
      return Stage::kIngest;
    case ZH_STAGE_CONVERT:
      return Stage::kConvert;
    case ZH_STAGE_ENCODE:
      return Stage::kEncode;
    case ZH_STAGE_SEND:
      return Stage::kSend;
    default:
      return Stage::kCount;
  }
}

/// stage_ns[] (ZH_STAGE_COUNT entries, indexed by zh_stage) from a frame's StageTimes.
inline void stagesToC(const StageTimes& t, std::int64_t (&out)[ZH_STAGE_COUNT]) noexcept {
  for (int i = 0; i < ZH_STAGE_COUNT; ++i) out[i] = t.at(stageFromC(static_cast<zh_stage>(i)));
}
/// StageTimes from stage_ns[] indexed by zh_stage.
inline void stagesFromC(const std::int64_t (&in)[ZH_STAGE_COUNT], StageTimes& t) noexcept {
  for (int i = 0; i < ZH_STAGE_COUNT; ++i) t.mark(stageFromC(static_cast<zh_stage>(i)), in[i]);
}

constexpr std::optional<log::Level> logLevelFromC(zh_log_level l) noexcept {
  switch (l) {
    case ZH_LOG_TRACE: return log::Level::kTrace;
    case ZH_LOG_DEBUG: return log::Level::kDebug;
    case ZH_LOG_INFO: return log::Level::kInfo;
    case ZH_LOG_WARN: return log::Level::kWarn;
    case ZH_LOG_ERROR: return log::Level::kError;
    case ZH_LOG_OFF: return log::Level::kOff;
    default: return std::nullopt;
  }
}

constexpr zh_log_level logLevelToC(log::Level l) noexcept {
  switch (l) {
    case log::Level::kTrace: return ZH_LOG_TRACE;
    case log::Level::kDebug: return ZH_LOG_DEBUG;
    case log::Level::kInfo: return ZH_LOG_INFO;
    case log::Level::kWarn: return ZH_LOG_WARN;
    case log::Level::kError: return ZH_LOG_ERROR;
    case log::Level::kOff: break;
  }
  return ZH_LOG_OFF;
}

// The numbers are the ABI: released values never change (zerohop.h; docs/library.md).
static_assert(ZH_FORMAT_UNKNOWN == 0 && ZH_FORMAT_YUYV == 1 && ZH_FORMAT_UYVY == 2 && ZH_FORMAT_NV12 == 3 &&
              ZH_FORMAT_I420 == 4 && ZH_FORMAT_RGB24 == 5 && ZH_FORMAT_BGRX == 6 && ZH_FORMAT_RGBA == 7 &&
              ZH_FORMAT_MJPEG == 8 && ZH_FORMAT_H264 == 9 && ZH_FORMAT_OPUS == 10);
static_assert(ZH_MEMORY_HOST == 0 && ZH_MEMORY_PINNED == 1 && ZH_MEMORY_DEVICE == 2);
static_assert(ZH_STAGE_CAPTURE == 0 && ZH_STAGE_INGEST == 1 && ZH_STAGE_CONVERT == 2 &&
              ZH_STAGE_ENCODE == 3 && ZH_STAGE_SEND == 4 && ZH_STAGE_COUNT == 5);
static_assert(ZH_OK == 0 && ZH_ERR_INVALID_ARGUMENT == -1 && ZH_ERR_NOT_FOUND == -2 &&
              ZH_ERR_UNAVAILABLE == -3 && ZH_ERR_UNSUPPORTED == -4 && ZH_ERR_IO == -5 &&
              ZH_ERR_DEVICE == -6 && ZH_ERR_PROTOCOL == -7 && ZH_ERR_TIMEOUT == -8 && ZH_ERR_INTERNAL == -9 &&
              ZH_ERR_OVERWRITTEN == -10);
static_assert(static_cast<std::size_t>(ZH_STAGE_COUNT) == kStageCount,
              "a new Stage needs its zh_stage number (appended) and stage_ns grows: a new versioned member");

// Every C value maps to a C++ value and back to itself.
constexpr bool formatsRoundTrip() {
  for (int f = ZH_FORMAT_YUYV; f <= ZH_FORMAT_OPUS; ++f) {
    const auto cpp = formatFromC(static_cast<zh_format>(f));
    if (!cpp || formatToC(*cpp) != f) return false;
  }
  return !formatFromC(ZH_FORMAT_UNKNOWN) && !formatFromC(static_cast<zh_format>(ZH_FORMAT_OPUS + 1));
}
static_assert(formatsRoundTrip());
constexpr bool memoriesRoundTrip() {
  for (int m = ZH_MEMORY_HOST; m <= ZH_MEMORY_DEVICE; ++m) {
    const auto cpp = memoryFromC(static_cast<zh_memory>(m));
    if (!cpp || memoryToC(*cpp) != m) return false;
  }
  return !memoryFromC(static_cast<zh_memory>(ZH_MEMORY_DEVICE + 1));
}
static_assert(memoriesRoundTrip());
static_assert(ZH_LOG_TRACE == 0 && ZH_LOG_DEBUG == 1 && ZH_LOG_INFO == 2 && ZH_LOG_WARN == 3 && ZH_LOG_ERROR == 4 &&
              ZH_LOG_OFF == 5);
constexpr bool logLevelsRoundTrip() {
  for (int l = ZH_LOG_TRACE; l <= ZH_LOG_OFF; ++l) {
    const auto cpp = logLevelFromC(static_cast<zh_log_level>(l));
    if (!cpp || logLevelToC(*cpp) != l) return false;
  }
  return !logLevelFromC(static_cast<zh_log_level>(ZH_LOG_OFF + 1));
}
static_assert(logLevelsRoundTrip());
constexpr bool stagesDistinct() {
  for (int a = 0; a < ZH_STAGE_COUNT; ++a) {
    if (stageFromC(static_cast<zh_stage>(a)) == Stage::kCount) return false;
    for (int b = 0; b < a; ++b)
      if (stageFromC(static_cast<zh_stage>(a)) == stageFromC(static_cast<zh_stage>(b))) return false;
  }
  return true;
}
static_assert(stagesDistinct());

}  // namespace zerohop::capi
