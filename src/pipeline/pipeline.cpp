#include "zerohop/pipeline.hpp"

#include <atomic>
#include <functional>
#include <mutex>
#include <optional>
#include <thread>
#include <vector>

#include "core/bounded_queue.hpp"
#include "core/latency_stats.hpp"
#include "core/setting_log.hpp"
#include "cpu_passthrough_decoder.hpp"
#include "encode_backlog.hpp"
#include "encode_keyframe_requests.hpp"
#include "frame_processor.hpp"
#include "gpupath/cuda_scaler.hpp"
#include "gpupath/nvdec_source.hpp"
#include "keyframe_waits.hpp"
#include "metrics_text.hpp"
#include "passthrough_pictures.hpp"
#include "record_sink.hpp"
#include "rendition_encodes.hpp"
#include "source_encoder_config.hpp"
#include "stats_json.hpp"
#include "stream/renditions.hpp"
#include "unit_share_sink.hpp"
#include "vp8_encode.hpp"
#include "zerohop/clock.hpp"
#include "zerohop/error.hpp"
#include "zerohop/log.hpp"
#include "zerohop/nvenc.hpp"
#include "zerohop/setting_error.hpp"
#include "zerohop/share.hpp"

namespace zerohop {
namespace {

using namespace std::chrono_literals;

constexpr std::size_t kEncodeQueueDepth = 2;
// Share ring depth: at 60 fps, 8 slots give a reader ~130 ms before its frame can be overwritten.
constexpr std::uint32_t kShareSlots = 8;
constexpr std::uint32_t kShareEncodedSlots = 16;
// The sound share: a second of 10 ms Opus packets (two of 20 ms), so a reader that polls beside its
// picture keeps up.
constexpr std::uint32_t kShareSoundSlots = 100;
constexpr std::size_t kShareSoundBytes = 8192;

constexpr TrackKey rungTrack(std::size_t rung, Codec codec = Codec::kH264) {
  return {codec, static_cast<std::uint8_t>(rung)};
}

}  // namespace

class Pipeline::Impl {
 public:
  explicit Impl(PipelineConfig config) : config_(std::move(config)), queue_(kEncodeQueueDepth) {
    // The pipeline binds no port: its viewers are a stream of a server its caller owns (one camera of
    // several: CameraServer; a program's frames: FrameStream). The sinks' callbacks are installed last,
    // once every member they read exists.
    std::shared_ptr<WhepStream> viewers = config_.viewers;
    if (!viewers) {
      throw Error(Errc::kInvalidArgument,
                  "PipelineConfig::viewers is empty: make a StreamServer and pass its unnamedStream() or "
                  "addStream(name) (the pipeline binds no port of its own)");
    }
    viewers_ = viewers.get();
    sinks_.push_back(std::move(viewers));
    if (!config_.recordPath.empty()) openRecording();  // a bad file name fails before the camera opens
    // The GPU is probed once. Whether a CUDA device works decides where the camera's buffers live:
    // page-locked memory the GPU reads by DMA (V4L2 USERPTR). An unusable `--gpu N` fails here,
    // before the camera is opened.
    const GpuDevicePlan device = planGpuDevice(config_.gpu, config_.autoGpuDevice);
    SourceOptions sourceOptions;
    if (device.usable) {  // a source that fills no buffers of its own (share:) never calls it
      sourceOptions.allocatorFactory = [dev = device.device] { return makeIngestAllocator(dev); };
      sourceOptions.gpuDevice = device.device;
    }
    source_ = config_.openSource ? config_.openSource(sourceOptions) : openSource(config_.source, sourceOptions);
    info_ = source_->info();
    const bool passthrough = isPassthroughSource(info_);
    const GpuPathChoice gpu = choosePath(device, info_.format);
    if (!passthrough) log::info(gpu.reason);
    if (info_.memory == MemoryKind::kDevice && !gpu.useGpu) {
      throw Error(Errc::kUnsupported, info_.description + " delivers frames in GPU memory, which only the GPU path "
                                      "takes, and this runs the " + gpu.reason);
    }
    if (passthrough) picturesDevice_ = nvdecDevice(device);
    if (!config_.shareName.empty()) openShares(passthrough, gpu);
    processor_ = makeFrameProcessor(config_, *source_, framesShare_.get(), gpu);
    encoderName_ = processor_->encoderName();
    dataPath_ = passthrough ? "passthrough" : gpu.useGpu ? "gpu" : "cpu";
    vp8Unavailable_ = processor_->vp8Unavailable();
    if (passthrough) openPassthroughPictures();
    // VP8 units go only to the sinks that want them, from the VP8 thread; sinks_ is fixed from start()
    // to stop(), and stop() ends that thread before it takes the sinks out.
    if (vp8Unavailable_.empty()) {
      vp8_ = std::make_unique<Vp8Encode>(encoderConfigFor(config_.encoder, info_, PixelFormat::kI420),
                                         [this](const EncodedUnitPtr& unit) {
                                           for (const auto& sink : sinks_) {
                                             if (sink->wants(TrackKey{Codec::kVP8})) sink->deliver(unit);
                                           }
                                         });
    }
    openRenditions(gpu.device);
    if (!config_.whipUrl.empty())
      sinks_.push_back(
          makeWhipSink(config_.whipUrl, config_.whipToken, config_.stream, config_.whipSimulcast));
    if (!config_.janus.empty()) sinks_.push_back(makeRtpSink(config_.janus));
    log::info("source: ", info_.description, "; encoder: ", encoderName_);
  }

  void openRecording() {
    auto sink = std::make_shared<RecordSink>(
        record::RecorderOptions{config_.recordPath, config_.recordSegmentSeconds, 0, config_.stream.sound});
    recording_ = sink.get();
    sinks_.push_back(std::move(sink));
  }

  /// The frame share (host I420 on the CPU path; device NV12 on the GPU path; in passthrough, where its
  /// pictures are decoded beside it while a reader is attached, device NV12 from NVDEC where it works,
  /// else host I420) and the H.264 share: both owned here, whichever path writes them.
  void openShares(bool passthrough, const GpuPathChoice& gpu) {
    auto units =
        std::make_shared<UnitShareSink>(config_.shareName + ".h264", Codec::kH264,
                                        std::size_t{info_.width} * info_.height + 65536, kShareEncodedSlots);
    unitsShare_ = units.get();
    sinks_.push_back(std::move(units));
    if (config_.stream.sound) {
      // The sound beside it (publishAudio): `zerohop record` muxes both, a program reads the packets.
      auto sound = std::make_shared<UnitShareSink>(config_.shareName + ".opus", Codec::kOpus,
                                                   kShareSoundBytes, kShareSoundSlots);
      log::info("sharing the sound as '", config_.shareName, ".opus' (", sound->publisher().socketPath(), ")");
      sinks_.push_back(std::move(sound));
    }
    const int shareDevice = passthrough ? picturesDevice_ : gpu.useGpu ? gpu.device : -1;
    if (shareDevice >= 0) {
      framesShare_ = std::make_unique<Publisher>(
          config_.shareName, SlotLayout::deviceImages(GpuFramePath::deviceLayout(info_.width, info_.height),
                                                      kShareSlots, shareDevice));
    } else {
      framesShare_ = std::make_unique<Publisher>(
          config_.shareName, SlotLayout::images(computeLayout(PixelFormat::kI420, info_.width, info_.height, 64), kShareSlots));
    }
    const char* what =
        !passthrough ? (gpu.useGpu ? "NV12 in GPU memory" : "I420 in host memory")
        : shareDevice >= 0
            ? "NV12 in GPU memory, the camera's H.264 decoded by NVDEC while a reader is attached"
            : "I420 in host memory, the camera's H.264 decoded on the CPU while a reader is attached";
    log::info("sharing frames (", what, ") as '", config_.shareName, "' (", framesShare_->socketPath(),
              ") and H.264 as '", config_.shareName, ".h264'");
  }

  /// Where passthrough's pictures are decoded: NVDEC on the plan's device where it works (the device
  /// share then gets them with no trip through the CPU), else -1: the CPU.
  static int nvdecDevice(const GpuDevicePlan& device) {
    if (!device.usable) return -1;
    try {
      gpupath::requireNvdec(device.device);
      return device.device;
    } catch (const Error& e) {
      log::info(
          "passthrough: its pictures (for the frame share, VP8 viewers, lower rungs) are decoded on the "
          "CPU: ",
          e.what());
      return -1;
    }
  }

  /// Passthrough's pictures: the camera's H.264 decoded beside it while the frame share has a reader or
  /// a sink wants VP8 or a lower rung, each picture then handed to the VP8 encode and the lower rungs
  /// (openRenditions); on the pictures thread (PassthroughPictures), so the decode never delays the
  /// units the viewers get.
  void openPassthroughPictures() {
    PassthroughPictures::DecoderFactory decoders;
    Publisher* share = framesShare_.get();
    if (picturesDevice_ >= 0) {
      decoders = [device = picturesDevice_, w = info_.width, h = info_.height, share] {
        return gpupath::makeNvdecPassthroughDecoder(device, w, h, share);
      };
    } else {
      decoders = [info = info_, share] { return makeCpuPassthroughDecoder(info, share); };
    }
    PassthroughPictures::Hooks hooks;
    hooks.wanted = [this] {
      if (sinksWant(TrackKey{Codec::kVP8})) return true;
      for (std::size_t rung = 1; renditions_ && rung < ladder_.size(); ++rung) {
        if (sinksWant(rungTrack(rung)) || (vp8Ladder_ && sinksWant(rungTrack(rung, Codec::kVP8))))
          return true;
      }
      return false;
    };
    hooks.picture = [this](const Frame* picture) {
      if (vp8_)
        offerVp8(picture ? [this] { return pictures_->hostPicture(); } : HostFrame{});  // NVDEC's: a download
      if (renditions_) encodeRenditions(picture);
    };
    try {
      pictures_ = std::make_unique<PassthroughPictures>(info_, framesShare_.get(), std::move(decoders),
                                                        std::move(hooks));
      vp8Unavailable_.clear();
    } catch (const Error& e) {
      picturesUnavailable_ = e.what();
      vp8Unavailable_ =
          "the camera's H.264 is passed through and cannot be decoded here (" + picturesUnavailable_ + ")";
      log::warn("passthrough: ", e.what(),
                "; the frame share and VP8 viewers get no pictures of this camera");
    }
  }

  bool sinksWant(TrackKey track) const {
    for (const auto& sink : sinks_) {
      if (sink->wants(track)) return true;
    }
    return false;
  }

  /// The ladder of renditions (config_.renditions): its lower rungs scaled from the frame rung 0 took,
  /// by libyuv on the CPU path and by CUDA from the device frame on the GPU path (`gpuDevice`), each
  /// encoded by x264 from its scaled picture, or beside NVENC by NVENC from VRAM. In passthrough, only
  /// when asked for ("auto" keeps one stream there): rung 0 is the camera's own H.264, the lower rungs
  /// are scaled from the pictures decoded beside it and encoded by x264, on the pictures thread.
  void openRenditions(int gpuDevice) {
    ladder_ = stream::renditionLadder(config_.renditions, info_.width, info_.height, config_.encoder.bitrateKbps);
    if (ladder_.empty()) return;
    // "auto" (the default) has a ladder only where there is an encode of our own; "on" or a list says
    // when it cannot be had.
    const bool asked = config_.renditions != "auto";
    const bool fromPictures = dataPath_ == "passthrough" && pictures_ && asked;
    if (dataPath_ != "cpu" && dataPath_ != "gpu" && !fromPictures) {
      if (asked) {
        log::warnAbout(
            setting::kRenditions, "renditions: the ", dataPath_, " path has no ladder here (",
            picturesUnavailable_.empty() ? "the camera's own H.264 is sent as it is" : picturesUnavailable_,
            "); every viewer gets that one stream");
      }
      ladder_.clear();
      return;
    }
    if (fromPictures) {
      // The camera's stream does not follow a viewer's estimate: a viewer is put on it only when its
      // estimate holds all of it (the bitrate setting: the camera's own rate).
      ladder_[0].minKbps = ladder_[0].maxKbps;
    }
    RenditionEncodes::Demand demand;
    demand.wanted = [this](TrackKey track) { return sinksWant(track); };
    demand.targetKbps = [this](TrackKey track) {
      for (const auto& sink : sinks_) {
        if (const std::uint32_t kbps = sink->targetKbps(track); kbps != 0) return kbps;
      }
      return std::uint32_t{0};
    };
    demand.deliver = [this](TrackKey track, const EncodedUnitPtr& unit) {
      for (const auto& sink : sinks_) {
        if (sink->wants(track)) sink->deliver(unit);
      }
    };
    // VP8 receivers get the lower rungs in VP8 too (scaled once with the H.264 rung, libvpx), wherever
    // this pipeline makes VP8 at all.
    vp8Ladder_ = vp8Unavailable_.empty();
    EncoderConfig rungs = encoderConfigFor(config_.encoder, info_, PixelFormat::kI420);
    if (fromPictures) {
      rungs.encoder = "x264";
      log::info(
          "renditions: rung 0 is the camera's own H.264 (a viewer is put on it once its estimate holds ",
          ladder_[0].maxKbps,
          " kb/s, rung 0's top rate: make it the camera's own); the lower rungs are "
          "its pictures decoded beside the passthrough, ",
          picturesDevice_ >= 0 ? "scaled by CUDA and encoded by NVENC where it opens, else by x264"
                               : "scaled by libyuv and encoded by x264");
      if (picturesDevice_ < 0) {
        renditions_ =
            std::make_unique<RenditionEncodes>(ladder_, std::move(rungs), makeCpuScaler(), std::move(demand),
                                               makeHostAllocator, RenditionNvenc{}, vp8Ladder_);
        return;
      }
      RenditionNvenc nvenc;
      if (probeNvenc(picturesDevice_).available) {
        nvenc.gpuDevice = picturesDevice_;
        nvenc.memory = [device = picturesDevice_] { return makeVramAllocator(device); };
      }
      renditions_ = std::make_unique<RenditionEncodes>(
          ladder_, std::move(rungs), makeCudaScaler(picturesDevice_), std::move(demand),
          [device = picturesDevice_] { return makeIngestAllocator(device); }, std::move(nvenc), vp8Ladder_);
      return;
    }
    if (dataPath_ == "cpu") {
      renditions_ =
          std::make_unique<RenditionEncodes>(ladder_, std::move(rungs), makeCpuScaler(), std::move(demand),
                                             makeHostAllocator, RenditionNvenc{}, vp8Ladder_);
      return;
    }
    // The GPU path: each lower rung is scaled in VRAM. Beside NVENC each is an NVENC session of its own
    // reading its scaled picture there (where a session does not open, x264 from a host copy of it);
    // beside x264, only its picture (a quarter of the frame's bytes or less) comes down, into page-locked
    // memory, for x264 (docs/ARCHITECTURE.md, "Renditions").
    rungs.encoder = "x264";
    renditionsFromDevice_ = true;
    RenditionNvenc nvenc;
    if (processor_->encodesFromDevice()) {
      nvenc.gpuDevice = gpuDevice;
      nvenc.memory = [gpuDevice] { return makeVramAllocator(gpuDevice); };
    }
    log::info("renditions: the lower rungs are scaled by CUDA on device ", gpuDevice, " and encoded by ",
              nvenc.gpuDevice >= 0 ? "NVENC from VRAM (x264 from a host copy where a session does not open)"
                                   : "x264 from a host copy of each scaled picture");
    renditions_ = std::make_unique<RenditionEncodes>(
        ladder_, std::move(rungs), makeCudaScaler(gpuDevice), std::move(demand),
        [gpuDevice] { return makeIngestAllocator(gpuDevice); }, std::move(nvenc), vp8Ladder_);
  }

  void addUnitSink(std::shared_ptr<UnitSink> sink) {
    if (!sink) throw Error(Errc::kInvalidArgument, "Pipeline::addUnitSink: null sink");
    if (startNs_.load() != 0) throw Error(Errc::kInvalidArgument, "Pipeline::addUnitSink after start()");
    sinks_.push_back(std::move(sink));
  }

  ~Impl() { stop(); }

  void start() {
    // Congestion control: the viewers' target is bounded by the configured bitrate (in passthrough only with
    // a ladder: the camera's rate, which a viewer's estimate must hold for rung 0).
    if (dataPath_ != "passthrough") {
      viewers_->setMaxBitrate(config_.encoder.bitrateKbps);
    } else if (renditions_) {
      viewers_->setMaxBitrate(ladder_[0].maxKbps);
    }
    // Every sink's receivers ask for keyframes through keyframes_: of every encode, or (the WHEP
    // viewers) of the one encode the receiver takes, each encode's requests rate-limited on their own.
    SinkSetup setup;
    setup.requestKeyframe = [this] {
      stampKeyframeRequest();
      keyframes_.requestAll();
    };
    setup.requestTrackKeyframe = [this](TrackKey track) {
      if (track == TrackKey{}) stampKeyframeRequest();
      keyframes_.request(track);
    };
    setup.ladder = ladder_;
    setup.vp8Ladder = renditions_ && vp8Ladder_;
    if (!vp8Unavailable_.empty()) setup.unavailable.push_back({Codec::kVP8, vp8Unavailable_});
    for (const auto& sink : sinks_) {
      log::info("output: ", sink->describe());
      sink->attach(setup);
    }
    startNs_.store(monotonicNs());
    running_ = true;
    captureThread_ = std::thread([this] { captureLoop(); });
    encodeThread_ = std::thread([this] { encodeLoop(); });
  }

  void stop() noexcept {
    running_ = false;
    queue_.close();
    if (captureThread_.joinable()) captureThread_.join();
    if (encodeThread_.joinable()) encodeThread_.join();
    if (pictures_) pictures_->stop();  // feeds the VP8 encode: ended before it
    if (vp8_) vp8_->stop();  // its thread delivers to the sinks: ended before they go
    // Ends every WebRTC session and output before the processor and source go away. Taken out under
    // serverMutex_ and destroyed outside it: an HTTP thread of the server may be in statsJson() (status()
    // reads viewers_).
    std::vector<std::shared_ptr<UnitSink>> sinks;
    {
      std::lock_guard lock(serverMutex_);
      sinks.swap(sinks_);
      unitsShare_ = nullptr;
      recording_ = nullptr;
      viewers_ = nullptr;
    }
    // The viewers' stream outlives this pipeline: its viewers must stop asking this one for keyframes.
    if (startNs_.load() != 0) {
      for (const auto& sink : sinks) sink->detach();
    }
    sinks.clear();
  }

  void publishAudio(const EncodedUnitPtr& unit) {
    if (!unit || startNs_.load() == 0) return;  // the sinks are attached in start()
    std::lock_guard lock(serverMutex_);  // stop() takes the sinks away under it
    for (const auto& sink : sinks_) {
      if (sink->wants(TrackKey{Codec::kOpus})) sink->deliver(unit);  // the viewers, WHIP, RTP, NAME.opus
    }
  }

  // Each rung's viewers of `codec` now (their ViewerStats::rung) and its switches so far, into `ladder`.
  static void countViewers(std::vector<RenditionStatus>& ladder, const std::vector<ViewerStats>& viewers,
                           const std::string& codec, const std::vector<std::uint64_t>& switches) {
    for (const ViewerStats& v : viewers) {
      if (v.codec == codec && v.rung >= 0 && static_cast<std::size_t>(v.rung) < ladder.size())
        ++ladder[v.rung].viewers;
    }
    for (std::size_t r = 0; r < switches.size() && r < ladder.size(); ++r) ladder[r].switches = switches[r];
  }

  PipelineStatus status() const {
    PipelineStatus s;
    s.latency = stats_.snapshot();
    s.source = source_->counters();
    s.queueDrops = queue_.dropped();
    s.keyframesForced = keyframesForced_.load();
    {
      std::lock_guard lock(serverMutex_);
      if (viewers_) {
        s.viewers = viewers_->viewerCount();
        s.viewerStats = viewers_->viewerStats();
        s.bitrate = viewers_->bitrate();
      }
      if (recording_) s.recording = recording_->stats();
    }
    if (framesShare_) s.shareReaders = framesShare_->stats().readersConnected;
    if (dataPath_ == "passthrough") {
      std::lock_guard lock(serverMutex_);
      if (unitsShare_) s.shareReaders += unitsShare_->readers();  // the H.264 share, the camera's own units
    }
    const std::int64_t startNs = startNs_.load();
    s.uptimeSeconds = startNs ? static_cast<double>(monotonicNs() - startNs) / 1e9 : 0;
    s.sourceDescription = info_.description;
    s.encoderName = encoderName_;
    s.dataPath = dataPath_;
    if (vp8_) {
      s.vp8 = vp8_->status();
      std::lock_guard lock(serverMutex_);
      if (viewers_) s.vp8.bitrate = viewers_->bitrate(Codec::kVP8);
    } else {
      s.vp8.unavailableReason = vp8Unavailable_;
    }
    if (renditions_) {
      s.renditions = renditions_->status();
      RenditionStatus& top = s.renditions[0];  // rung 0: the main encode's
      top.units = units_.load();
      top.keyframes = keyframeUnits_.load();
      top.keyframesForced = s.keyframesForced;
      top.encoderKbps = encoderKbps_.load();
      std::vector<std::uint64_t> switches, vp8Switches;
      {
        std::lock_guard lock(serverMutex_);
        if (viewers_) {
          switches = viewers_->rungSwitches();
          vp8Switches = viewers_->vp8RungSwitches();
        }
      }
      countViewers(s.renditions, s.viewerStats, "H264", switches);
      s.vp8Renditions = renditions_->vp8Status();
      if (!s.vp8Renditions.empty()) {
        RenditionStatus& vp8Top = s.vp8Renditions[0];  // rung 0: the VP8 encode's
        vp8Top.running = s.vp8.running;
        vp8Top.units = s.vp8.encoder.unitsOut;
        vp8Top.keyframes = s.vp8.encoder.keyframes;
        vp8Top.encoder = s.vp8.running ? "libvpx" : "";
        vp8Top.encoderKbps = s.vp8.encoderKbps;
        countViewers(s.vp8Renditions, s.viewerStats, "VP8", vp8Switches);
      }
    }
    if (pictures_) {
      s.passthroughDecode = pictures_->status();
    } else if (dataPath_ == "passthrough") {
      s.passthroughDecode.unavailableReason = picturesUnavailable_;
    }
    s.keyframeWait = keyframeWaits_.status();
    s.heldBackUntilIdr = processor_->unitsHeldBack();
    return s;
  }

  std::string statsJson() const {
    return renderStatsJson(status(), StatsContext{info_.description, encoderName_, dataPath_});
  }
  std::string metricsText() const {
    return renderMetricsText(status(), StatsContext{info_.description, encoderName_, dataPath_});
  }
  std::optional<Error> failure() const {
    std::lock_guard lock(failureMutex_);
    return failure_;
  }

 private:
  void fail(Error error) {
    std::lock_guard lock(failureMutex_);
    if (!failure_) failure_ = std::move(error);
  }

  void captureLoop() {
    while (running_) {
      try {
        auto lease = source_->next(100ms);
        if (!lease) continue;
        processor_->arrived(lease->frame());  // before the queue: where the source's drops lie
        // What the queue dropped to make room may matter to the processor (passthrough's SPS/PPS).
        // Seen under the queue's lock: the encode thread cannot take a later unit before the
        // processor knows this one is gone.
        queue_.pushSeeingEvicted(std::move(*lease),
                                 [this](const FrameLease& gone) { processor_->evicted(gone.frame()); });
      } catch (const Error& e) {
        log::error("capture: ", e.what());
        fail(Error(e.code(), std::string("capture: ") + e.what()));
        running_ = false;
      }
    }
  }

  // The time of the first rung-0 keyframe request not yet taken by forwardKeyframeRequest() (any thread).
  void stampKeyframeRequest() {
    std::int64_t none = 0;
    keyframeRequestedNs_.compare_exchange_strong(none, monotonicNs());
  }

  // The keyframe requests due now (each encode's at most once every EncodeKeyframeRequests::kMinGapNs)
  // go to their encodes only: rung 0's to the processor, VP8's and the lower rungs' with their next frame.
  void forwardKeyframeRequest(std::int64_t now) {
    const EncodeKeyframeRequests::Due due = keyframes_.take(now);
    if (due.rung(0)) {
      // Unstamped: the request pending from the start (the first IDR), which no viewer made.
      const std::int64_t requestedNs = keyframeRequestedNs_.exchange(0);
      if (processor_->requestKeyframe()) {
        ++keyframesForced_;
      } else if (requestedNs != 0) {
        keyframeWaits_.unhonoured(requestedNs);  // the viewer waits for the source's next IDR
      }
    }
    if (due.vp8Rung(0)) vp8Keyframe_ = true;
    renditionKeyframes_.fetch_or(due.rungs & ~1u);
    vp8RenditionKeyframes_.fetch_or(due.vp8Rungs & ~1u);
  }

  // The viewers' congestion control targets go to the encoders when they changed (no keyframe): the
  // H.264 viewers' to the processor, the VP8 viewers' to the VP8 encode. The encode thread reads
  // viewers_ unlocked: it changes only in stop(), after it has joined.
  void forwardBitrate() {
    if (vp8_) vp8_->setTargetKbps(viewers_->targetBitrateKbps(Codec::kVP8));
    if (!followBitrate_) return;
    const std::uint32_t target = viewers_->targetBitrateKbps();
    if (target == 0 || target == appliedKbps_) return;
    try {
      followBitrate_ = processor_->setBitrate(target);
      appliedKbps_ = target;
      encoderKbps_.store(target);
    } catch (const Error& e) {
      log::warn("encoder: cannot follow the viewers' bitrate (", e.what(), "); it stays at ", appliedKbps_, " kb/s");
      followBitrate_ = false;
    }
  }

  void encodeLoop() {
    appliedKbps_ = config_.encoder.bitrateKbps;
    encoderKbps_.store(appliedKbps_);
    while (running_) {
      auto in = queue_.pop(100ms);
      if (!in) continue;
      try {
        forwardKeyframeRequest(monotonicNs());
        forwardBitrate();
        EncodedUnitPtr unit = processor_->process(*in);
        send(unit);
        if (pictures_) {
          pictures_->offer(std::move(unit));  // its picture, if wanted, on the pictures thread
        } else {
          if (vp8_) offerVp8([this] { return processor_->lastHostFrame(); });
          if (renditions_) sendRenditions();
        }
      } catch (const Error& e) {
        // A bad frame (corrupt JPEG...) fails alone; the next one is processed.
        log::warn("frame ", in->frame().sequence, " dropped: ", e.what());
        stats_.addDrops(1);
        if (pictures_) pictures_->offer(nullptr);  // a unit not sent: its pictures wait for an IDR
      }
      if (auto behind = backlog_.onFrame(monotonicNs(), queue_.dropped())) {
        // Named by its source: with several cameras, the one whose encode is behind.
        log::warn("encoder (", info_.description, "): ",
                  describeBacklog(*behind, stats_.snapshot().stage[static_cast<std::size_t>(Stage::kEncode)].p50Ms,
                                  info_.fps));
      }
    }
  }

  void send(const EncodedUnitPtr& unit) {
    if (!unit) return;
    for (const auto& sink : sinks_) sink->deliver(unit);  // the encode thread; sinks_ is fixed while it runs
    ++units_;
    const std::int64_t sentNs = monotonicNs();
    if (unit->keyframe) {
      ++keyframeUnits_;
      keyframeWaits_.keyframeSent(sentNs);
    }
    StageTimes times = unit->times;
    times.mark(Stage::kSend, sentNs);
    stats_.record(times);
  }

  // The host frame for VP8: the frame the H.264 encode just took, or passthrough's decoded picture.
  using HostFrame = std::function<const Frame*()>;

  // Hands `host()` to the VP8 encode while a sink wants VP8 (only then is it asked for: on the GPU path
  // with NVENC, or NVDEC's pictures, that is one download from VRAM); an empty `host`: no picture this
  // time. The encode thread's, or in passthrough the pictures thread's.
  void offerVp8(const HostFrame& host) {
    const bool wanted = sinksWant(TrackKey{Codec::kVP8});
    const Frame* frame = nullptr;
    if (wanted && host) {
      try {
        frame = host();
      } catch (const Error& e) {  // the H.264 unit went out: only VP8 viewers lose this frame
        if (!vp8InputFailed_) {
          log::warn("encoder: VP8 gets no copy of the frame (", e.what(), "); VP8 viewers lose frames");
        }
        vp8InputFailed_ = true;
      }
    }
    vp8_->offer(frame, wanted, vp8Keyframe_.exchange(false));
  }

  // The lower rungs, from the frame rung 0 just took: on the CPU path its host I420 frame, on the GPU
  // path its device NV12 frame (no copy either way).
  void sendRenditions() {
    const Frame* frame = nullptr;
    try {
      frame = renditionsFromDevice_ ? processor_->lastDeviceFrame() : processor_->lastHostFrame();
    } catch (const Error& e) {  // rung 0's unit went out: only the lower rungs' viewers lose this frame
      log::warn("encoder: the renditions get no frame (", e.what(), ")");
    }
    encodeRenditions(frame);
  }

  // The lower rungs of `frame` (null: none this time), with the keyframes asked of them since the last.
  void encodeRenditions(const Frame* frame) {
    renditions_->encode(frame, renditionKeyframes_.exchange(0u), vp8RenditionKeyframes_.exchange(0u));
  }

  PipelineConfig config_;
  // The unit sinks, the WHEP viewers' stream first; fixed from start() until stop() (the encode thread
  // reads it unlocked); taken out under serverMutex_ in stop().
  std::vector<std::shared_ptr<UnitSink>> sinks_;
  WhepStream* viewers_ = nullptr;        // sinks_[0]; guarded by serverMutex_ (null after stop())
  UnitShareSink* unitsShare_ = nullptr;  // in sinks_ with shareName; guarded by serverMutex_
  RecordSink* recording_ = nullptr;      // in sinks_ with recordPath; guarded by serverMutex_
  mutable std::mutex serverMutex_;
  std::unique_ptr<FrameSource> source_;
  SourceInfo info_;
  std::unique_ptr<Publisher> framesShare_;     // the frame share, written by either path's processor
  std::unique_ptr<FrameProcessor> processor_;  // borrows source_ and framesShare_: declared after them
  std::string encoderName_;
  std::string dataPath_ = "cpu";  // "cpu", "gpu" or "passthrough", for /stats and /metrics
  std::string vp8Unavailable_;    // "" when this path can make VP8 (then vp8_ is set)
  std::unique_ptr<Vp8Encode>
      vp8_;  // fed by the encode thread (passthrough: the pictures thread); status() reads its status()
  // Passthrough: the camera's H.264 decoded beside it for the frame share and VP8 (null on the other
  // paths, or where no decoder opens: picturesUnavailable_ says why).
  std::unique_ptr<PassthroughPictures> pictures_;
  std::string picturesUnavailable_;
  int picturesDevice_ = -1;  // passthrough: the CUDA device whose NVDEC decodes its pictures; -1: the CPU
  std::atomic<bool> vp8Keyframe_{false};  // set by the encode thread, taken by the VP8 feeder
  bool vp8InputFailed_ =
      false;  // the VP8 feeder's thread only: the failure to copy a frame for VP8 was logged
  std::vector<Rendition> ladder_;  // empty: one encode
  std::unique_ptr<RenditionEncodes>
      renditions_;  // the lower rungs (with a ladder); encode thread (passthrough: pictures thread)
  bool renditionsFromDevice_ = false;  // the GPU path: the lower rungs are scaled from the device frame
  // Bit r: rung r is to make a keyframe (set by the encode thread; taken by it, or in passthrough by the
  // pictures thread).
  std::atomic<std::uint32_t> renditionKeyframes_{0};
  std::atomic<std::uint32_t> vp8RenditionKeyframes_{0};  // the same for the VP8 rungs
  bool vp8Ladder_ = false;  // the lower rungs are made in VP8 too (set before start())
  BoundedQueue<FrameLease> queue_;
  EncodeBacklog backlog_;  // encode thread only
  LatencyStats stats_{300};
  std::atomic<bool> running_{false};
  EncodeKeyframeRequests keyframes_;  // the sinks' requests, per encode (rung 0 pending from the start)
  std::uint32_t appliedKbps_ = 0;  // the encoder's bitrate (encode thread)
  bool followBitrate_ = true;      // false: the data path cannot follow congestion control
  std::atomic<std::uint64_t> keyframesForced_{0};
  std::atomic<std::int64_t> keyframeRequestedNs_{0};  // stampKeyframeRequest(); 0: none since the last take
  KeyframeWaits keyframeWaits_;  // the waits for IDRs the processor could not force
  std::atomic<std::uint64_t> units_{0}, keyframeUnits_{0};  // the main encode's units (rung 0's), keyframes of them
  std::atomic<std::uint32_t> encoderKbps_{0};  // appliedKbps_, for status()
  // Written by start(), read by stats() on the HTTP thread, which may already ask while the
  // pipeline starts (a viewer page polling /stats).
  std::atomic<std::int64_t> startNs_{0};
  mutable std::mutex failureMutex_;
  std::optional<Error> failure_;
  std::thread captureThread_;
  std::thread encodeThread_;
};

Pipeline::Pipeline(PipelineConfig config) : impl_(std::make_unique<Impl>(std::move(config))) {}
Pipeline::~Pipeline() = default;
void Pipeline::addUnitSink(std::shared_ptr<UnitSink> sink) { impl_->addUnitSink(std::move(sink)); }
void Pipeline::start() { impl_->start(); }
void Pipeline::stop() noexcept { impl_->stop(); }
void Pipeline::publishAudio(EncodedUnitPtr opusPacket) { impl_->publishAudio(std::move(opusPacket)); }
PipelineStatus Pipeline::status() const { return impl_->status(); }
std::string Pipeline::statsJson() const { return impl_->statsJson(); }
std::string Pipeline::metricsText() const {
  return impl_->metricsText();
}
std::optional<Error> Pipeline::failure() const { return impl_->failure(); }

}  // namespace zerohop
