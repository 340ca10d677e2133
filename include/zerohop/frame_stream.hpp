#pragma once
// FrameStream: stream frames your program makes (a renderer, your own capture, a decoder) through
// zerohop's encode and WebRTC path, from host or GPU memory, with the same per-stage timing as
// `zerohop serve`.
//
//   your frames -> input() (a FrameInput: write slots in place, or publish() copies)
//   your sound  -> pushAudio() (48 kHz PCM) -> one Opus encode -> the same viewers, in the same MediaStream
//     -> GPU path (device frames, or --gpu auto with a CUDA device): NV12 in VRAM -> NVENC where a
//        session opens, else x264 on one host copy;  CPU path: libyuv -> x264
//     -> WHEP viewers on config.stream's address, and WHIP / Janus when configured
//
// Frames are handed to the pipeline in this process (input(): a bounded queue of leases on the
// input's pool; no share, no socket, no directory): the encoder never makes your thread wait; when it
// falls behind, the oldest frames are dropped (status().source.drops).
// Thread-safety: thread-safe; input() may be used from any thread (FrameInput is thread-safe).
// Lifetime: the destructor ends every viewer session and stops the threads; slots acquired from
// input() and not committed must be dropped before it.

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "zerohop/encoder.hpp"
#include "zerohop/error.hpp"
#include "zerohop/export.h"
#include "zerohop/frame_input.hpp"
#include "zerohop/pipeline.hpp"
#include "zerohop/stream_server.hpp"

namespace zerohop {

struct FrameStreamConfig {
  PixelFormat format = PixelFormat::kNV12;  ///< NV12, I420, RGBA, BGRx, YUYV, UYVY, RGB24
  std::uint32_t width = 1280;
  std::uint32_t height = 720;
  double fps = 30;  ///< the rate you push at (rate control and pacing need it)
  /// kHost: input() slots in host memory. kDevice: in GPU memory of `cudaDevice` (the GPU path; NVENC
  /// reads them in VRAM where it can run).
  MemoryKind memory = MemoryKind::kHost;
  int cudaDevice = 0;
  std::uint32_t slots = 4;    ///< frames that may wait for the encoder (input queue depth; drop oldest past it)
  EncoderConfig encoder;      ///< width/height/fps are taken from above
  StreamConfig stream;        ///< where viewers connect (port 0: a free one, see url())
  std::string gpu = "auto";   ///< "auto", "off" or a device number (see choosePath)
  /// Non-empty: also share the converted frames as NAME and the H.264 as NAME.h264 with other processes
  /// (with audioChannels, the sound too: NAME.opus).
  std::string shareName;
  std::string whipUrl;    ///< non-empty: also publish to this WHIP endpoint
  std::string whipToken;  ///< its bearer token
  bool whipSimulcast = false;  ///< the ladder's rungs as simulcast layers (PipelineConfig::whipSimulcast)
  std::string janus;      ///< non-empty: also send RTP to this Janus mountpoint / RTP receiver (makeRtpSink)
  /// Sinks of yours every access unit also goes to (a recorder, a transport of your own).
  std::vector<std::shared_ptr<UnitSink>> sinks;
  /// Your sound beside the picture: 0 (none), 1 (mono) or 2 (stereo) channels of 48 kHz signed 16-bit
  /// PCM you give pushAudio(). One Opus encode (20 ms packets) for every viewer whose offer has audio,
  /// in the same MediaStream as the picture, so a browser plays both in sync.
  std::uint32_t audioChannels = 0;
};

class ZEROHOP_API FrameStream {
 public:
  /// Creates the server (binds the port), the input and the encoder and starts streaming.
  /// Throws Error (kInvalidArgument: a layout the input or the encoder refuses; kUnavailable: the
  /// port is taken, no usable device for device frames).
  explicit FrameStream(FrameStreamConfig config);
  ~FrameStream();
  FrameStream(const FrameStream&) = delete;
  FrameStream& operator=(const FrameStream&) = delete;

  /// Where your frames go: acquireWrite() + commit() writes in place (device slots: commit with the
  /// stream that wrote them; nothing is copied), publish() copies a frame of yours in.
  FrameInput& input();
  /// One block of your sound (FrameStreamConfig::audioChannels): `frames` sample frames of interleaved
  /// signed 16-bit PCM at 48 kHz (frames x channels values), `captureNs` the CLOCK_MONOTONIC instant of
  /// its first sample, the clock your frames' capture times use (0: now). Push blocks as the sound comes
  /// (10 or 20 ms each is usual); the instants place them, and a gap of more than 5 ms restarts the
  /// packet clock there. Never waits: blocks the encoder has not taken within a second are dropped, oldest
  /// first. Throws Error(kInvalidArgument) when the stream has no sound (audioChannels 0), for null
  /// samples, 0 frames or more than 48,000 in one block.
  void pushAudio(const std::int16_t* samples, std::size_t frames, std::int64_t captureNs = 0);
  std::string url() const;          ///< the viewer page, "http://127.0.0.1:PORT/"
  PipelineStatus status() const;    ///< per-stage latency, fps, drops, viewers
  std::string statsJson() const;    ///< the body of GET /stats
  std::optional<Error> failure() const;  ///< the error that ended streaming (code + message), or nullopt

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace zerohop
