#pragma once
// The serve pipeline: source -> (convert -> encode | H.264 passthrough) -> sinks, with per-stage timestamps.
//
// Sinks (zerohop/sinks.hpp): the converted frames go to the frame share (with shareName), the access
// units to every UnitSink: the WHEP viewers (always), WHIP and RTP/Janus (when configured), the H.264
// share (with shareName), and sinks a program adds with addUnitSink(). Sound (publishAudio) goes to the
// sinks that take it (UnitSink::wants() of Codec::kOpus): the viewers, WHIP, RTP/Janus (with an audio
// port) and the sound share NAME.opus.
//
// Threads: the capture thread pulls frames from the source and hands them over through a
// 2-deep drop-oldest queue (the camera never waits); the encode thread runs the data path chosen for
// the source (raw/MJPEG: CPU convert + x264; a camera delivering H.264: its access units are sent as
// they are, no decode, no encode) and publishes each access unit to the stream server, which fans it
// out to every viewer. Viewers' keyframe requests (join, PLI/FIR) set a flag the encode thread turns
// into an IDR (encoder) or forwards to the camera (passthrough), at most one per kMinKeyframeGap.
// On the CPU and GPU paths, while a sink wants VP8 (a WHEP viewer whose offer has no usable H.264),
// each frame is also encoded as VP8 (on a thread of its own) and those units go to the sinks that want them.
// Thread-safety: thread-safe; construct, start() and stop() from one controlling thread.

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "zerohop/encoder.hpp"
#include "zerohop/error.hpp"
#include "zerohop/export.h"
#include "zerohop/latency.hpp"
#include "zerohop/sinks.hpp"
#include "zerohop/source.hpp"
#include "zerohop/stream_server.hpp"

namespace zerohop {

struct PipelineConfig {
  SourceSpec source;  ///< the source to open (through the source registry), unless openSource is set
  /// Non-null: the pipeline's source is the object this returns (called once, in the constructor, with
  /// the buffer options the chosen data path wants), and `source` is unused: e.g. a FrameInput's
  /// openSource, a program's own frames in process (zerohop/frame_input.hpp; FrameStream).
  std::function<std::unique_ptr<FrameSource>(const SourceOptions&)> openSource;
  EncoderConfig encoder;   ///< width/height/fps are taken from the source
  /// What the outputs take from the stream's settings: the WHIP session's ICE servers and TURN secret,
  /// and `sound` (the WHIP offer and the shares carry a sound track). Its HTTP settings are the viewers'
  /// server's, unused here.
  StreamConfig stream;
  /// `--gpu`: "auto" (the GPU path when a CUDA device works and handles the source's format), "off",
  /// or a device number (an unusable device is an Error). choosePath() in src/gpupath/gpu_path.hpp decides.
  std::string gpu = "auto";
  /// With gpu "auto": the CUDA device to try (placeCameras' choice, src/gpupath/gpu_placement.hpp;
  /// CameraServer sets it); -1 = the first.
  int autoGpuDevice = -1;
  /// Non-empty: publish every converted frame as share NAME and every access unit as NAME.h264
  /// (zerohop::Subscriber / `zerohop tap`). Host memory (I420) on the CPU path, device memory (NV12) on the GPU path. In passthrough there are no
  /// raw frames: only NAME.h264 is published.
  std::string shareName;
  /// Non-empty: also publish the stream to this WHIP endpoint (makeWhipSink), with this bearer token.
  std::string whipUrl;
  std::string whipToken;
  /// With whipUrl: offer the ladder's rungs (`renditions`) as simulcast layers, for an SFU that gives each
  /// of its viewers the layer its link carries (makeWhipSink's `simulcast`; `serve --whip-simulcast on`).
  bool whipSimulcast = false;
  /// The ladder of renditions (`serve --renditions`, a `[[camera]]` table's `renditions`): "auto" (full,
  /// 1/2 and 1/4 size, the rungs under 320x180 left out: none below 640x360), "off" (one encode, every
  /// viewer on it), "on" (full, 1/2 and 1/4 size) or "DIV:MIN-MAX,..." (docs/stream.md, "Renditions").
  /// Each H.264 WHEP viewer receives the highest rung its own estimate fits; a rung no viewer is on is
  /// not encoded. The lower rungs are x264's, scaled by libyuv (CPU path) or CUDA (GPU path); passthrough
  /// has one stream (with "on" or a list it says so).
  std::string renditions = "auto";
  /// Non-empty: also send it as RTP to a Janus mountpoint or RTP receiver (makeRtpSink).
  std::string janus;
  /// Non-empty: also record the main encode (and the sound, with `stream.sound`) to this file,
  /// FILE.mp4 (fragmented) or FILE.mkv, from the first keyframe, timestamped by capture time
  /// (`serve --record`, a `[[camera]]` table's `record`; docs/recording.md). Another name: the
  /// constructor throws kInvalidArgument.
  std::string recordPath;
  /// > 0: a new file at the first keyframe this long into the current one: FILE-0000.mp4, FILE-0001.mp4, ...
  double recordSegmentSeconds = 0;
  /// Required: the WHEP viewers, a stream of a StreamServer the caller owns and keeps past the
  /// pipeline (StreamServer::unnamedStream(), or addStream(name), one per camera: CameraServer). The
  /// pipeline binds no port and serves no HTTP: the server's owner gives it statsJson() and
  /// metricsText() (StreamServer::setStatsProvider). Empty: the constructor throws kInvalidArgument.
  std::shared_ptr<WhepStream> viewers;
  /// GPU path, MJPEG: decode through the process's JpegBatcher for the device (GpuPathConfig::batchJpeg),
  /// shared with the other pipelines on that GPU. CameraServer sets it from `batchJpegCameras`.
  bool batchJpeg = false;
};

/// The VP8 encode for viewers whose offer has no usable H.264 (docs/stream.md, "Codec choice").
struct Vp8EncodeStatus {
  bool available = false;  ///< this data path can make VP8 (passthrough: from the pictures decoded beside it)
  std::string unavailableReason;  ///< why not, when !available
  bool running = false;           ///< a viewer receives VP8 now, so the encode runs
  std::string encoderName;        ///< "libvpx VP8 (...)" once it ran
  std::uint64_t starts = 0;       ///< times it was started (the first VP8 viewer after none)
  EncoderStats encoder;           ///< over every run
  std::int64_t encodeCpuNs = 0;   ///< encode thread CPU time spent in VP8 encodes, over every run
  std::int64_t encodeWallNs = 0;  ///< wall time of those encodes
  LatencySnapshot latency;        ///< capture -> send of its units (encode: ends after the H.264 unit was sent)
  std::uint32_t encoderKbps = 0;  ///< the rate the running VP8 encoder codes for now; 0 while it does not run
  StreamBitrate bitrate;          ///< congestion control's target for the VP8 encode (its weakest VP8 viewer) and what it made
};

/// A passed-through camera's H.264 decoded beside the passthrough for what needs pixels (the frame share's
/// readers, VP8 viewers, a ladder's lower rungs), only while something does.
struct PassthroughDecodeStatus {
  bool available = false;         ///< passthrough with a decoder: the frame share and VP8 can be had
  std::string unavailableReason;  ///< why not, on passthrough when !available
  bool running = false;           ///< something wants pixels now, so each unit is decoded
  std::string decoder;            ///< "libavcodec H.264 (CPU)"
  std::uint64_t starts = 0;    ///< times decoding started (after none was wanted, or at an IDR after a gap)
  std::uint64_t pictures = 0;  ///< pictures decoded and handed on
  std::uint64_t caughtUpUnits =
      0;                     ///< units decoded only to bring the decoder to the current unit at a start
  std::uint64_t errors = 0;  ///< units the decoder refused (it waited for the next IDR)
  std::uint64_t behind = 0;  ///< times the decode fell behind the camera and waited for an IDR
  double decodeMsP50 = 0;    ///< the last decodes' wall time
  double decodeMsP99 = 0;
  std::int64_t decodeCpuNs = 0;  ///< CPU time of the pictures thread (decodes and the share's copies)
};

/// One rung of the camera's ladder of renditions (PipelineConfig::renditions): rung 0 is the main encode.
struct RenditionStatus {
  Rendition size;                 ///< its picture size and bitrate range
  Codec codec = Codec::kH264;     ///< the codec of this encode of the rung (VP8: for receivers without H.264)
  bool running = false;           ///< a receiver takes it now, so it is encoded (rung 0: always)
  std::uint64_t starts = 0;       ///< times its encoder opened (lower rungs)
  std::uint64_t units = 0;        ///< units it made, over every run
  std::uint64_t keyframes = 0;    ///< of those, keyframes (IDR: its start, its interval, forced)
  std::uint64_t keyframesForced = 0;  ///< keyframes forced by its own receivers' requests (rung 0: keyframesForced)
  std::uint32_t encoderKbps = 0;  ///< the rate its running encoder codes for; 0 while it does not run
  std::string encoder;  ///< its running encoder ("libx264", "h264_nvenc", "libvpx"); empty while stopped
  std::int64_t encodeCpuNs = 0;   ///< encode thread CPU time of its scaling and encoding (lower rungs)
  std::size_t viewers = 0;        ///< viewers whose track takes its units now
  std::uint64_t switches = 0;     ///< viewers' moves onto it (at its keyframe), ended viewers' included
};

/// How long viewers wait for a keyframe the source cannot be asked for (a camera passed through without a
/// keyframe control: an RTSP camera, a V4L2 H.264 camera without one): each wait from the first keyframe
/// request not honoured (a viewer's start, its PLI/FIR) to the next IDR sent. No waits where requests are
/// honoured (an encode of ours, a camera that takes them).
struct KeyframeWaitStatus {
  Percentiles wait;         ///< p50/p99 over the last 64 waits (samples: how many of them)
  double maxMs = 0;         ///< the longest wait since start
  std::uint64_t count = 0;  ///< waits since start
  double sumMs = 0;         ///< their total since start
  Percentiles idrInterval;  ///< the source's IDR interval as sent (between consecutive IDRs), over the last 64
};

/// The recording (PipelineConfig::recordPath), written by a thread of its own.
struct RecordingStatus {
  std::string path;                ///< as configured; "" without a recording
  std::string currentPath;         ///< the file being written ("" before the first keyframe)
  std::uint64_t units = 0;         ///< pictures written, every file
  std::uint64_t audioPackets = 0;  ///< Opus packets written, every file
  std::uint64_t bytes = 0;         ///< picture and sound bytes written
  std::uint32_t files = 0;         ///< files opened so far
  std::uint64_t dropped = 0;  ///< units dropped because the disk fell behind (the file resumed at a keyframe)
  double recordedSeconds = 0;  ///< media time written, every file
  std::string error;           ///< non-empty: the write that ended the recording, and why
};

struct PipelineStatus {
  LatencySnapshot latency;
  SourceCounters source;
  std::uint64_t queueDrops = 0;  ///< frames the encoder was too slow for
  std::uint64_t keyframesForced = 0;  ///< keyframe requests honoured (IDR forced, or asked of the camera)
  std::size_t viewers = 0;
  std::vector<ViewerStats> viewerStats;  ///< each viewer's start-up and feedback (StreamServer::viewerStats)
  StreamBitrate bitrate;  ///< congestion control's target for the encoder and what it made (StreamServer::bitrate)
  std::uint32_t shareReaders =
      0;  ///< readers attached to the frame share (passthrough: and to NAME.h264; 0 without --share)
  double uptimeSeconds = 0;
  std::string sourceDescription;  ///< the opened source, "test pattern 1280x720@30 yuyv"
  std::string encoderName;        ///< "libx264 ...", "h264_nvenc ...", "passthrough"
  std::string dataPath;           ///< "cpu", "gpu" or "passthrough"
  Vp8EncodeStatus vp8;            ///< the second encode, for viewers without H.264
  PassthroughDecodeStatus passthroughDecode;  ///< passthrough's pictures (dataPath "passthrough")
  std::vector<RenditionStatus> renditions;  ///< the ladder, rung 0 first; empty: none (one encode)
  /// The same ladder's VP8 encodes (rung 0: the VP8 encode, `vp8`); empty where VP8 has no ladder.
  std::vector<RenditionStatus> vp8Renditions;
  KeyframeWaitStatus keyframeWait;  ///< viewers' waits for an IDR the source could not be asked for
  RecordingStatus recording;        ///< PipelineConfig::recordPath's file(s)
  /// Passthrough: camera units not sent because one they refer to was lost (dropped by the queue or
  /// the source), from the loss to the camera's next IDR. 0 on the other paths.
  std::uint64_t heldBackUntilIdr = 0;
};

class ZEROHOP_API Pipeline {
 public:
  /// Opens the source and the encoders and makes the outputs (WHIP, RTP/Janus, the shares). Throws Error.
  explicit Pipeline(PipelineConfig config);
  ~Pipeline();  ///< stops and joins everything
  Pipeline(const Pipeline&) = delete;
  Pipeline& operator=(const Pipeline&) = delete;

  /// Adds a sink every access unit also goes to (a recorder, a transport of your own). Before
  /// start() only (Error kInvalidArgument after); the pipeline keeps it until it is destroyed.
  void addUnitSink(std::shared_ptr<UnitSink> sink);

  void start();
  void stop() noexcept;  ///< idempotent; returns once every thread has exited

  /// One Opus packet of the stream's sound to every sink that takes sound (UnitSink::wants() of
  /// Codec::kOpus): the WHEP viewers whose offer has audio (WhepStream::publishAudio: `ptsNs` on the
  /// clock of the frames' capture times), the WHIP session, RTP/Janus and the sound share. Non-blocking;
  /// a null unit, or one before start() or after stop(), is ignored.
  void publishAudio(EncodedUnitPtr opusPacket);

  PipelineStatus status() const;
  std::string statsJson() const;    ///< the body of GET /stats
  std::string metricsText() const;  ///< the body of GET /metrics (Prometheus text)
  /// The first error that ended the pipeline (e.g. the camera went away for good), with its code
  /// (Error::code()) and message; nullopt while it runs (or stopped cleanly).
  std::optional<Error> failure() const;

 private:
  class Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace zerohop
