#pragma once
// How an NVENC encode follows a bitrate target. FFmpeg's h264_nvenc reconfigures a bitrate change with
// resetEncoder and forceIDR set (nvenc.c reconfig_encoder), so each change is an IDR: the target is
// followed in steps of 20 % or more, at most one every kGapNs unless it falls by 40 % or more (a link
// that collapses is followed at once). Untested on NVENC (no NVENC on the machines here); pure.

#include <cstdint>

namespace zerohop {

struct NvencRateSteps {
  static constexpr std::int64_t kGapNs = 2'000'000'000;

  /// Whether to apply `targetKbps` now, to an encoder coding for `appliedKbps` (0: none yet) since
  /// `lastChangeNs`.
  static bool apply(std::uint32_t appliedKbps, std::uint32_t targetKbps, std::int64_t nowNs,
                    std::int64_t lastChangeNs) noexcept {
    if (appliedKbps == 0) return true;
    const double ratio = static_cast<double>(targetKbps) / appliedKbps;
    if (ratio > 0.8 && ratio < 1.2) return false;
    return nowNs - lastChangeNs >= kGapNs || ratio <= 0.6;
  }
};

}  // namespace zerohop
