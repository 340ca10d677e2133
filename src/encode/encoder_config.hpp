#pragma once
// Validation of an EncoderConfig, shared by every encoder implementation, so a bad request fails
// the same way (and before any codec is opened) whichever encoder is chosen.
// Thread-safety: pure functions, reentrant.

#include <cstdint>
#include <string>

#include "zerohop/encoder.hpp"

namespace zerohop::encode {

inline constexpr std::uint32_t kMinBitrateKbps = 32;
inline constexpr std::uint32_t kMaxBitrateKbps = 240000;

/// Throws Error(kInvalidArgument) naming the bad field, its value and what is accepted.
void validateConfig(const EncoderConfig& config);

/// Throws Error(kInvalidArgument) when intra refresh is asked for without a period (keyframeIntervalFrames 0).
void validateIntraRefresh(const EncoderConfig& config);

/// Throws Error(kInvalidArgument) unless kbps is within [kMinBitrateKbps, kMaxBitrateKbps].
void validateBitrate(std::uint32_t kbps);

/// A one-frame VBV in bits: `kbps` at `fps` divided into frames (at least 1000 bits, so an encoder that takes
/// the VBV in kbit never rounds it down to "no VBV"). Both encoders use it, so no frame waits on the wire
/// behind a bigger one at any frame rate.
int oneFrameVbvBits(std::uint32_t kbps, double fps) noexcept;

/// The x264 preset to open: `config.preset` as given, or for "auto" the one chosen by the macroblock rate
/// (measured on the 2-core reference box, docs/benchmarks.md "x264 at 60 fps"): superfast up to 1080p30's
/// rate (244,800 macroblocks a second: 720p30, 720p60, 1080p30; 720p60 costs ~29 % of one core), ultrafast
/// above it (1080p60: ~43 % of a core instead of superfast's ~59 %), so the encode stays near 40 % of a core.
std::string x264PresetFor(const EncoderConfig& config);

/// True if `preset` is one of x264's presets (ultrafast ... placebo).
bool isX264Preset(const std::string& preset) noexcept;

}  // namespace zerohop::encode
