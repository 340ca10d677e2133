#pragma once
// The h264_nvenc settings for the lowest latency, as data: the AVCodecContext fields and h264_nvenc
// private options NvencEncoder sets before avcodec_open2. Built from the EncoderConfig alone, so a
// test checks them on any machine whose libavcodec has h264_nvenc (no GPU, no session opened).
//   preset p1..p7 (x264 names mapped, nvencPreset), tune ull (ultra-low latency), profile baseline,
//   level from h264LevelIdc, rc cbr, bit_rate = rc_max_rate, rc_buffer_size = one frame (bitrate / fps),
//   zerolatency 1 (no reordering delay), delay 0 (the packet leaves in the frame's own encode call),
//   rc-lookahead 0, no B-frames (max_b_frames 0, b_ref_mode disabled), forced-idr 1, gop_size from
//   keyframeIntervalFrames (0: endless), intra-refresh 0/1 from EncoderConfig::intraRefresh.
// Thread-safety: reentrant; applyNvencSettings is thread-bound like the context it fills.

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "zerohop/encoder.hpp"

struct AVCodecContext;

namespace zerohop::encode {

struct NvencSettings {
  const char* preset = "p1";
  int gopSize = 0;
  int maxBFrames = 0;
  std::int64_t bitRate = 0;    ///< bit/s
  std::int64_t rcMaxRate = 0;  ///< bit/s (CBR: = bitRate)
  int rcBufferSize = 0;        ///< bits: one frame's share of the bitrate
  /// h264_nvenc private options in the order they are set (av_opt_set on priv_data).
  std::vector<std::pair<std::string, std::string>> options;
};

/// The settings for `config` at H.264 level `levelIdc` (31 = 3.1). Throws Error(kInvalidArgument) for an
/// unknown preset, or intra refresh without a period (keyframeIntervalFrames 0).
NvencSettings nvencSettings(const EncoderConfig& config, int levelIdc);

/// Sets `s` on `c`, an h264_nvenc context not yet opened: the fields, then each option. Throws
/// Error(kDevice) naming the option this libavcodec does not take.
void applyNvencSettings(AVCodecContext* c, const NvencSettings& s);

/// bit_rate, rc_max_rate and rc_buffer_size (one frame) for `kbps` at `fps`: at start and on setBitrate.
void applyNvencBitrate(AVCodecContext* c, std::uint32_t kbps, double fps) noexcept;

}  // namespace zerohop::encode
