#pragma once
// H.264 encoding for live video: one access unit out for every frame in, no B-frames, no lookahead,
// CBR with a one-frame VBV, SPS/PPS in band before every IDR, an IDR on request, bitrate changeable
// while running. makeEncoder() picks the implementation: "x264" (libavcodec + libx264, host frames),
// "nvenc" (libavcodec h264_nvenc on the CUDA device, device NV12 frames; availability from
// probeNvenc() in zerohop/nvenc.hpp) or "auto" (NVENC when it can be used, else x264). docs/nvenc.md.
// "vp8" (libavcodec + libvpx, host I420 frames) is the same contract for VP8: one frame out per frame
// in, CBR, a keyframe on request; the pipeline runs it beside the H.264 encode for viewers whose offer
// has no usable H.264 (docs/stream.md, "Codec choice"); setBitrate() is unsupported there.
// Thread-safety: a VideoEncoder is thread-bound (one encode thread); makeEncoder() and the H.264
// helpers are reentrant. Ownership: makeEncoder() transfers the encoder to the caller; encode()
// borrows the frame only for the call (the lease may be released as soon as it returns).

#include <cstdint>
#include <memory>
#include <string>

#include "zerohop/export.h"
#include "zerohop/encoded_unit.hpp"
#include "zerohop/frame.hpp"

namespace zerohop {

struct EncoderConfig {
  std::string encoder = "x264";  ///< "x264", "nvenc", "auto" or "vp8"; resolved by makeEncoder()
  std::uint32_t width = 1280, height = 720;
  double fps = 30;
  std::uint32_t bitrateKbps = 2500;
  std::uint32_t keyframeIntervalFrames = 120;  ///< 0 = keyframes only on request
  int threads = 1;  ///< x264 sliced threads (1 keeps latency and CPU predictable; 0 = one per core)
  /// x264 preset, or for NVENC "p1".."p7" (an x264 name maps to the nearest: ultrafast/superfast -> p1,
  /// veryfast/faster -> p2, fast/medium -> p3, slower ones -> p4..p7; "auto" -> p1). "auto" (the default)
  /// picks x264's by the macroblock rate, from measurements on the 2-core reference box: superfast up to
  /// 1080p30's rate (720p30 ~6 ms of one core per frame, ~17 %; 720p60 ~5 ms, ~29 %: 0.4 dB below
  /// veryfast at 60 % of its CPU), ultrafast above (1080p60: ~7 ms a frame, ~43 % of a core, where
  /// superfast needs ~59 %), keeping the encode near the 40 %-of-a-core budget and well inside a frame
  /// period. Numbers in docs/benchmarks.md (zerohop_encode_bench).
  std::string preset = "auto";
  PixelFormat inputFormat = PixelFormat::kI420;  ///< kI420 or kNV12: what encode() is given
  /// Where encode()'s frames are: kHost/kPinned for x264, kDevice (with inputFormat kNV12) for NVENC.
  /// "auto" chooses NVENC only for kDevice NV12 input, since that is what the NVENC encoder takes.
  MemoryKind inputMemory = MemoryKind::kHost;
  int gpuDevice = 0;           ///< NVENC: the CUDA device the frames live on (its primary context is used)
  bool intraRefresh = false;   ///< NVENC: periodic intra refresh over keyframeIntervalFrames instead of periodic IDRs
  ColorDesc color{};  ///< signalled in the stream's VUI (the converter's dst.color; MJPEG is full range)
};

/// Counters of one encoder, for the stats page and tests.
struct EncoderStats {
  std::uint64_t framesIn = 0;      ///< frames given to encode()
  std::uint64_t unitsOut = 0;      ///< access units returned
  std::uint64_t emptyOutputs = 0;  ///< encode() calls that produced nothing (must stay 0 with our settings)
  std::uint64_t keyframes = 0;     ///< IDR access units
  std::uint64_t bytesOut = 0;
};

class ZEROHOP_API VideoEncoder {
 public:
  virtual ~VideoEncoder() = default;
  /// Encodes one host frame of the configured size and input format; returns its access unit
  /// (Annex B, SPS/PPS before every IDR), or nullptr if the encoder produced nothing for this input
  /// (must not happen with our settings; counted in stats().emptyOutputs). `forceKeyframe` makes
  /// this frame an IDR. Copies sequence/times/wallClockMs and ptsNs (= capture time), marks Stage::kEncode.
  /// Throws Error(kInvalidArgument) for a frame of another size/format or in device memory, and
  /// Error(kDevice) when the codec fails.
  virtual EncodedUnitPtr encode(const Frame& frame, bool forceKeyframe) = 0;
  /// Takes effect from the next frame, without restarting the stream (no IDR). Throws
  /// Error(kInvalidArgument) for 0 or an absurd value.
  virtual void setBitrate(std::uint32_t kbps) = 0;
  /// "libx264 (superfast, zerolatency, CBR 2500 kb/s)"
  virtual std::string name() const = 0;
  virtual EncoderStats stats() const = 0;
};

/// Creates the encoder `config` names. Throws Error with the cause and the fix:
/// kInvalidArgument for a bad size/fps/bitrate/preset/input format or an unknown encoder name,
/// kUnavailable when the encoder cannot run here: libavcodec without libx264, or "nvenc" where
/// probeNvenc() says no ("NVENC: <reason>; use the x264 encoder", within seconds), kDevice when the
/// codec refuses to open. "auto" never throws for NVENC: it logs one line saying why it uses x264.
ZEROHOP_API std::unique_ptr<VideoEncoder> makeEncoder(const EncoderConfig& config);

/// Sends FFmpeg's log lines through zerohop::log (its info chatter at debug level, its errors as
/// warnings) instead of stderr. Process-wide (av_log_set_callback): applications opt in; the CLI does.
ZEROHOP_API void routeFfmpegLogsToZerohopLog();

/// The lowest H.264 level (level_idc: 31 = 3.1) that holds the configured size, frame rate and
/// bitrate (ITU-T H.264 Table A-1), never below 3.1, the level WebRTC offers by default. Throws
/// Error(kInvalidArgument) if even level 5.2 cannot hold it.
ZEROHOP_API int h264LevelIdc(std::uint32_t width, std::uint32_t height, double fps, std::uint32_t bitrateKbps);

/// The SDP profile-level-id of what this encoder sends: constrained baseline, "42e01f" at 720p30.
/// (The in-band SPS carries constraint flags 0xc0, also constrained baseline: same profile.)
ZEROHOP_API std::string h264ProfileLevelId(const EncoderConfig& config);

}  // namespace zerohop
