#pragma once
// The C API's versioned structs (zerohop.h: "Later versions only add members at the end").
// Each is accepted from its first released size up: a caller built against an older header passes
// a smaller struct_size, and the members it lacks take their defaults (inputs) or are not written
// (outputs); a caller built against a newer header passes a larger one, whose extra members this
// build does not know and ignores. Below the first released size is ZH_ERR_INVALID_ARGUMENT.
//
// Inputs are read release by release, not byte by byte: an older struct's tail padding may lie
// where a later release put a member (zh_reader_options 0.1.0 is 32 bytes, its members end at 28,
// and cuda_device took 28..32), so only the members of the newest release the caller's struct_size
// covers are taken. Appending a member means appending its release to the table here (a
// static_assert fails the build until it is).
// Thread-safety: reentrant.
#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <cstring>

#include "zerohop/zerohop.h"

/// Bytes up to the end of `member`.
#define ZH_CAPI_END_OF(type, member) (offsetof(type, member) + sizeof(static_cast<type*>(nullptr)->member))

namespace zerohop::capi {

/// One release of a versioned struct: the struct_size its callers pass (its sizeof then) and where
/// its last member ends (what lies past that was tail padding).
struct Release {
  std::size_t size;
  std::size_t end;
};
template <class T>
constexpr Release releaseEndingAt(std::size_t end) {
  return {(end + alignof(T) - 1) / alignof(T) * alignof(T), end};
}

// Releases of each struct, oldest first. The first one's end is the smallest struct_size accepted.
inline constexpr std::array kFrameInfoReleases{
    releaseEndingAt<zh_frame_info>(ZH_CAPI_END_OF(zh_frame_info, cuda_event))};
inline constexpr std::array kShareInfoReleases{
    releaseEndingAt<zh_share_info>(ZH_CAPI_END_OF(zh_share_info, transport)),       // 0.1.0
    releaseEndingAt<zh_share_info>(ZH_CAPI_END_OF(zh_share_info, device_access))};  // 0.1.0 + device fields
inline constexpr std::array kReaderOptionsReleases{
    releaseEndingAt<zh_reader_options>(ZH_CAPI_END_OF(zh_reader_options, spin_us)),  // 0.1.0
    releaseEndingAt<zh_reader_options>(
        ZH_CAPI_END_OF(zh_reader_options, device_copy))};  // + cuda_device, device_copy
inline constexpr std::array kReaderStatsReleases{
    releaseEndingAt<zh_reader_stats>(ZH_CAPI_END_OF(zh_reader_stats, reconnects))};
inline constexpr std::array kPublisherOptionsReleases{
    releaseEndingAt<zh_publisher_options>(ZH_CAPI_END_OF(zh_publisher_options, lease_timeout_ms))};
inline constexpr std::array kFrameMetaReleases{
    releaseEndingAt<zh_frame_meta>(ZH_CAPI_END_OF(zh_frame_meta, cuda_event))};
inline constexpr std::array kPublisherStatsReleases{
    releaseEndingAt<zh_publisher_stats>(ZH_CAPI_END_OF(zh_publisher_stats, bytes_copied))};
inline constexpr std::array kStreamOptionsReleases{
    releaseEndingAt<zh_stream_options>(ZH_CAPI_END_OF(zh_stream_options, share_name)),  // 0.1.0
    releaseEndingAt<zh_stream_options>(
        ZH_CAPI_END_OF(zh_stream_options, audio_channels)),  // + audio_channels
    releaseEndingAt<zh_stream_options>(
        ZH_CAPI_END_OF(zh_stream_options, whip_simulcast))};  // + whip_simulcast

inline constexpr std::size_t kFrameInfoFirstSize = kFrameInfoReleases.front().end;
inline constexpr std::size_t kShareInfoFirstSize = kShareInfoReleases.front().end;
inline constexpr std::size_t kReaderOptionsFirstSize = kReaderOptionsReleases.front().end;
inline constexpr std::size_t kReaderStatsFirstSize = kReaderStatsReleases.front().end;
inline constexpr std::size_t kPublisherOptionsFirstSize = kPublisherOptionsReleases.front().end;
inline constexpr std::size_t kFrameMetaFirstSize = kFrameMetaReleases.front().end;
inline constexpr std::size_t kPublisherStatsFirstSize = kPublisherStatsReleases.front().end;
inline constexpr std::size_t kStreamOptionsFirstSize = kStreamOptionsReleases.front().end;

// The newest release of each table is this header's struct: a member appended to zerohop.h
// without its release row here fails the build.
static_assert(kFrameInfoReleases.back().size == sizeof(zh_frame_info));
static_assert(kShareInfoReleases.back().size == sizeof(zh_share_info));
static_assert(kReaderOptionsReleases.back().size == sizeof(zh_reader_options));
static_assert(kReaderStatsReleases.back().size == sizeof(zh_reader_stats));
static_assert(kPublisherOptionsReleases.back().size == sizeof(zh_publisher_options));
static_assert(kFrameMetaReleases.back().size == sizeof(zh_frame_meta));
static_assert(kPublisherStatsReleases.back().size == sizeof(zh_publisher_stats));
static_assert(kStreamOptionsReleases.back().size == sizeof(zh_stream_options));

#if defined(__x86_64__) || defined(__aarch64__)
// What programs built against 0.1.0 pass on LP64 Linux. If one of these fails, a released member
// was inserted, resized or reordered instead of a new one appended: that breaks the ABI.
static_assert(kFrameInfoReleases.front().size == 176);
static_assert(kShareInfoReleases.front().size == 72);
static_assert(kReaderOptionsReleases.front().size == 32 && kReaderOptionsFirstSize == 28);
static_assert(kReaderStatsReleases.front().size == 40);
static_assert(kPublisherOptionsReleases.front().size == 64);
static_assert(kFrameMetaReleases.front().size == 88);
static_assert(kPublisherStatsReleases.front().size == 32);
static_assert(kStreamOptionsReleases.front().size == 88);
#endif

/// A caller's input struct as this build's whole struct: `defaults`, overwritten with the members
/// of the newest release its struct_size covers (the first release's, partly, for a struct_size
/// between that release's end and its size). Check struct_size >= the first release's end before.
template <class T, std::size_t N>
T readVersioned(const T& caller, T defaults, const std::array<Release, N>& releases) noexcept {
  std::size_t take = std::min<std::size_t>(caller.struct_size, releases.front().end);
  for (const Release& r : releases)
    if (caller.struct_size >= r.size) take = r.end;
  std::memcpy(&defaults, &caller, take);
  defaults.struct_size = static_cast<std::uint32_t>(sizeof(T));
  return defaults;
}

/// Writes `value` into a caller's output struct, no byte past its struct_size (which it keeps).
template <class T>
void writeVersioned(T* caller, T value) noexcept {
  value.struct_size = caller->struct_size;
  std::memcpy(caller, &value, std::min<std::size_t>(caller->struct_size, sizeof(T)));
}

}  // namespace zerohop::capi
