#include "zerohop/pipeline.hpp"

#include <atomic>
#include <mutex>
#include <optional>
#include <thread>

#include "core/bounded_queue.hpp"
#include "metrics_text.hpp"
#include "stats_json.hpp"
#include "zerohop/clock.hpp"
#include "zerohop/converter.hpp"
#include "zerohop/error.hpp"
#include "zerohop/log.hpp"
#include "zerohop/share.hpp"

namespace zerohop {
namespace {

using namespace std::chrono_literals;

// Keyframe requests closer together than this are merged (a PLI storm must not turn every frame into an IDR).
constexpr std::int64_t kMinKeyframeGapNs = 250'000'000;
constexpr std::size_t kEncodeQueueDepth = 2;
constexpr std::uint32_t kConvertedSlots = 3;
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
    source_ = openSource(config_.source);
    info_ = source_->info();
    converter_ = makeCpuConverter();
    converted_.emplace(computeLayout(PixelFormat::kI420, info_.width, info_.height, 64), kConvertedSlots,
                       makeHostAllocator());
    if (info_.format == PixelFormat::kH264) {
      throw Error(Errc::kUnsupported,
                  "the camera delivers H.264; sending it on without decoding (passthrough) is not built yet "
                  "(issue 6): ask it for a raw or MJPEG format, e.g. --source v4l2:" + config_.source.path +
                      "?format=mjpeg");
    }
    EncoderConfig enc = config_.encoder;
    enc.width = info_.width;
    enc.height = info_.height;
    enc.fps = info_.fps;
    enc.inputFormat = PixelFormat::kI420;
    // YUV sources keep their colour description through libyuv; JPEG (JFIF) is BT.601 full range.
    enc.color = info_.format == PixelFormat::kMJPEG ? ColorDesc{ColorMatrix::kBt601, ColorRange::kFull} : info_.color;
    encoder_ = makeEncoder(enc);
    encoderName_ = encoder_->name();
    if (!config_.shareName.empty()) {
      const auto layout = computeLayout(PixelFormat::kI420, info_.width, info_.height, 64);
      framesShare_ = std::make_unique<Publisher>(config_.shareName, SlotLayout::images(layout, kShareSlots));
      unitsShare_ = std::make_unique<Publisher>(
          config_.shareName + ".h264",
          SlotLayout::encoded(PixelFormat::kH264, std::size_t{info_.width} * info_.height + 65536, kShareEncodedSlots));
      log::info("sharing frames as '", config_.shareName, "' (", framesShare_->socketPath(), ") and H.264 as '",
                config_.shareName, ".h264'");
    }
    server_->setKeyframeRequestHandler([this] { keyframeRequested_.store(true); });
    server_->setStatsProvider([this] { return statsJson(); });
    server_->setMetricsProvider(
        [this] { return renderMetricsText(status(), StatsContext{info_.description, encoderName_}); });
    log::info("source: ", info_.description, "; converter: ", converter_->name(), "; encoder: ", encoderName_);
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
    server_.reset();  // ends every WebRTC session before the encoder and source go away
  }

  PipelineStatus status() const {
    PipelineStatus s;
    s.latency = stats_.snapshot();
    s.source = source_->counters();
    s.queueDrops = queue_.dropped();
    s.keyframesForced = keyframesForced_.load();
    s.viewers = server_ ? server_->viewerCount() : 0;
    s.shareReaders = framesShare_ ? framesShare_->stats().readersConnected : 0;
    s.uptimeSeconds = startNs_ ? static_cast<double>(monotonicNs() - startNs_) / 1e9 : 0;
    return s;
  }

  std::string statsJson() const { return renderStatsJson(status(), StatsContext{info_.description, encoderName_}); }
  std::string url() const { return server_ ? server_->url() : std::string{}; }
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

  bool takeKeyframeRequest(std::int64_t now) {
    if (!keyframeRequested_.load()) return false;
    if (now - lastForcedKeyframeNs_ < kMinKeyframeGapNs) return false;  // stays pending until allowed
    keyframeRequested_.store(false);
    lastForcedKeyframeNs_ = now;
    ++keyframesForced_;
    return true;
  }

  void encodeLoop() {
    while (running_) {
      auto in = queue_.pop(100ms);
      if (!in) continue;
      try {
        if (framesShare_) {
          encodeShared(*in);
        } else {
          encodeLocal(*in);
        }
      } catch (const Error& e) {
        // A bad frame (corrupt JPEG...) fails alone; the next one is processed.
        log::warn("frame ", in->frame().sequence, " dropped: ", e.what());
        stats_.addDrops(1);
      }
    }
  }

  // Converts into a private buffer, then encodes.
  void encodeLocal(FrameLease& in) {
    auto out = converted_->tryAcquire();
    if (!out) {  // cannot happen with one encode thread; count it rather than block
      stats_.addDrops(1);
      return;
    }
    converter_->convert(in.frame(), out->frame());
    in.reset();  // the source buffer goes back as soon as its pixels are converted
    send(encoder_->encode(out->frame(), takeKeyframeRequest(monotonicNs())));
  }

  // Converts straight into a slot of the share ring (no extra copy), publishes it, then encodes
  // from the same slot: this thread is the ring's only writer and does not acquire the next slot
  // before this encode is done, so the slot is stable while the encoder reads it.
  void encodeShared(FrameLease& in) {
    WriteSlot slot = framesShare_->acquireWrite();
    Frame frame = slot.frame();
    converter_->convert(in.frame(), frame);
    in.reset();
    framesShare_->commit(std::move(slot), frame);
    send(encoder_->encode(frame, takeKeyframeRequest(monotonicNs())));
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
  std::unique_ptr<FrameSource> source_;
  SourceInfo info_;
  std::unique_ptr<FrameConverter> converter_;
  std::optional<BufferPool> converted_;
  std::unique_ptr<VideoEncoder> encoder_;
  std::string encoderName_;
  std::unique_ptr<Publisher> framesShare_;
  std::unique_ptr<Publisher> unitsShare_;
  std::unique_ptr<StreamServer> server_;
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
