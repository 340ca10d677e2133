#include "zerohop/pipeline.hpp"

#include <atomic>
#include <mutex>
#include <optional>
#include <thread>

#include "core/bounded_queue.hpp"
#include "frame_processor.hpp"
#include "metrics_text.hpp"
#include "stats_json.hpp"
#include "zerohop/clock.hpp"
#include "zerohop/error.hpp"
#include "zerohop/log.hpp"
#include "zerohop/share.hpp"

namespace zerohop {
namespace {

using namespace std::chrono_literals;

// Keyframe requests closer together than this are merged (a PLI storm must not turn every frame into an IDR).
constexpr std::int64_t kMinKeyframeGapNs = 250'000'000;
constexpr std::size_t kEncodeQueueDepth = 2;
// Share ring depth: at 60 fps, 8 slots give a reader ~130 ms before its frame can be overwritten.
constexpr std::uint32_t kShareSlots = 8;
constexpr std::uint32_t kShareEncodedSlots = 16;

}  // namespace

class Pipeline::Impl {
 public:
  explicit Impl(PipelineConfig config) : config_(std::move(config)), queue_(kEncodeQueueDepth) {
    // Bind the port first: a busy port fails before the camera is opened or anything is logged.
    // The server's callbacks are installed last, once every member they read exists.
    server_ = std::make_unique<StreamServer>(config_.stream);
    // Whether a CUDA device works decides where the camera's buffers live: page-locked memory the
    // GPU reads by DMA (V4L2 USERPTR). An unusable `--gpu N` fails here, before the camera is opened.
    SourceOptions sourceOptions;
    if (const GpuPathChoice device = choosePath(config_.gpu, PixelFormat::kYUYV); device.useGpu) {
      sourceOptions.allocatorFactory = [dev = device.device] { return makeIngestAllocator(dev); };
    }
    source_ = openSource(config_.source, sourceOptions);
    info_ = source_->info();
    const bool passthrough = isPassthroughSource(info_);
    const GpuPathChoice gpu = choosePath(config_.gpu, info_.format);
    if (!passthrough) log::info(gpu.reason);
    if (info_.memory == MemoryKind::kDevice && !gpu.useGpu) {
      throw Error(Errc::kUnsupported, info_.description + " delivers frames in GPU memory, which only the GPU path "
                                      "takes, and this runs the " + gpu.reason);
    }
    if (!config_.shareName.empty()) {
      unitsShare_ = std::make_unique<Publisher>(
          config_.shareName + ".h264",
          SlotLayout::encoded(PixelFormat::kH264, std::size_t{info_.width} * info_.height + 65536, kShareEncodedSlots));
      if (passthrough) {
        log::info("sharing H.264 as '", config_.shareName, ".h264' (", unitsShare_->socketPath(),
                  "); no raw frames are shared in passthrough (the camera's H.264 is never decoded)");
      } else if (gpu.useGpu) {
        log::info("sharing frames (NV12 in GPU memory) as '", config_.shareName, "' and H.264 as '", config_.shareName,
                  ".h264'");
      } else {
        const auto layout = computeLayout(PixelFormat::kI420, info_.width, info_.height, 64);
        framesShare_ = std::make_unique<Publisher>(config_.shareName, SlotLayout::images(layout, kShareSlots));
        log::info("sharing frames as '", config_.shareName, "' (", framesShare_->socketPath(), ") and H.264 as '",
                  config_.shareName, ".h264'");
      }
    }
    processor_ = makeFrameProcessor(config_, *source_, framesShare_.get(), gpu);
    processorSharesFrames_ = gpu.useGpu && !passthrough && !config_.shareName.empty();
    encoderName_ = processor_->encoderName();
    dataPath_ = passthrough ? "passthrough" : gpu.useGpu ? "gpu" : "cpu";
    server_->setKeyframeRequestHandler([this] { keyframeRequested_.store(true); });
    server_->setStatsProvider([this] { return statsJson(); });
    server_->setMetricsProvider(
        [this] { return renderMetricsText(status(), StatsContext{info_.description, encoderName_, dataPath_}); });
    log::info("source: ", info_.description, "; encoder: ", encoderName_);
  }

  ~Impl() { stop(); }

  void start() {
    startNs_ = monotonicNs();
    running_ = true;
    captureThread_ = std::thread([this] { captureLoop(); });
    encodeThread_ = std::thread([this] { encodeLoop(); });
  }

  void stop() noexcept {
    running_ = false;
    queue_.close();
    if (captureThread_.joinable()) captureThread_.join();
    if (encodeThread_.joinable()) encodeThread_.join();
    // Ends every WebRTC session before the processor and source go away. Taken out under serverMutex_
    // and destroyed outside it: an HTTP thread may be in statsJson() (status() reads server_) until
    // the server has joined it (a data race TSan found when reset() ran beside that read).
    std::unique_ptr<StreamServer> server;
    {
      std::lock_guard lock(serverMutex_);
      server = std::move(server_);
    }
    server.reset();
  }

  PipelineStatus status() const {
    PipelineStatus s;
    s.latency = stats_.snapshot();
    s.source = source_->counters();
    s.queueDrops = queue_.dropped();
    s.keyframesForced = keyframesForced_.load();
    {
      std::lock_guard lock(serverMutex_);
      s.viewers = server_ ? server_->viewerCount() : 0;
    }
    if (framesShare_) {
      s.shareReaders = framesShare_->stats().readersConnected;
    } else if (processorSharesFrames_) {
      s.shareReaders = processor_->frameShareReaders();  // the GPU path's device ring
    } else if (unitsShare_) {
      s.shareReaders = unitsShare_->stats().readersConnected;
    }
    s.uptimeSeconds = startNs_ ? static_cast<double>(monotonicNs() - startNs_) / 1e9 : 0;
    return s;
  }

  std::string statsJson() const {
    return renderStatsJson(status(), StatsContext{info_.description, encoderName_, dataPath_});
  }
  std::string url() const {
    std::lock_guard lock(serverMutex_);
    return server_ ? server_->url() : std::string{};
  }
  std::string failure() const {
    std::lock_guard lock(failureMutex_);
    return failure_;
  }

 private:
  void fail(const std::string& what) {
    std::lock_guard lock(failureMutex_);
    if (failure_.empty()) failure_ = what;
  }

  void captureLoop() {
    while (running_) {
      try {
        auto lease = source_->next(100ms);
        if (lease) queue_.push(std::move(*lease));
      } catch (const Error& e) {
        log::error("capture: ", e.what());
        fail(std::string("capture: ") + e.what());
        running_ = false;
      }
    }
  }

  // A pending keyframe request goes to the processor at most once every kMinKeyframeGapNs.
  void forwardKeyframeRequest(std::int64_t now) {
    if (!keyframeRequested_.load()) return;
    if (now - lastForcedKeyframeNs_ < kMinKeyframeGapNs) return;  // stays pending until allowed
    keyframeRequested_.store(false);
    lastForcedKeyframeNs_ = now;
    if (processor_->requestKeyframe()) ++keyframesForced_;
  }

  void encodeLoop() {
    while (running_) {
      auto in = queue_.pop(100ms);
      if (!in) continue;
      try {
        forwardKeyframeRequest(monotonicNs());
        send(processor_->process(*in));
      } catch (const Error& e) {
        // A bad frame (corrupt JPEG...) fails alone; the next one is processed.
        log::warn("frame ", in->frame().sequence, " dropped: ", e.what());
        stats_.addDrops(1);
      }
    }
  }

  void send(const EncodedUnitPtr& unit) {
    if (!unit) return;
    server_->publish(unit);
    if (unitsShare_) unitsShare_->publish(*unit);
    StageTimes times = unit->times;
    times.mark(Stage::kSend, monotonicNs());
    stats_.record(times);
  }

  PipelineConfig config_;
  std::unique_ptr<StreamServer> server_;  // guarded by serverMutex_ once the HTTP threads run
  mutable std::mutex serverMutex_;
  std::unique_ptr<FrameSource> source_;
  SourceInfo info_;
  std::unique_ptr<Publisher> framesShare_;
  std::unique_ptr<Publisher> unitsShare_;
  std::unique_ptr<FrameProcessor> processor_;  // borrows source_ and framesShare_: declared after them
  bool processorSharesFrames_ = false;         // the GPU path publishes the frame share itself
  std::string encoderName_;
  std::string dataPath_ = "cpu";  // "cpu", "gpu" or "passthrough", for /stats and /metrics
  BoundedQueue<FrameLease> queue_;
  LatencyStats stats_{300};
  std::atomic<bool> running_{false};
  std::atomic<bool> keyframeRequested_{true};
  std::int64_t lastForcedKeyframeNs_ = 0;
  std::atomic<std::uint64_t> keyframesForced_{0};
  std::int64_t startNs_ = 0;
  mutable std::mutex failureMutex_;
  std::string failure_;
  std::thread captureThread_;
  std::thread encodeThread_;
};

Pipeline::Pipeline(PipelineConfig config) : impl_(std::make_unique<Impl>(std::move(config))) {}
Pipeline::~Pipeline() = default;
void Pipeline::start() { impl_->start(); }
void Pipeline::stop() noexcept { impl_->stop(); }
PipelineStatus Pipeline::status() const { return impl_->status(); }
std::string Pipeline::statsJson() const { return impl_->statsJson(); }
std::string Pipeline::statusLine() const { return renderStatusLine(impl_->status()); }
std::string Pipeline::url() const { return impl_->url(); }
std::string Pipeline::failure() const { return impl_->failure(); }

}  // namespace zerohop
