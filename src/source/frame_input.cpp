// FrameInput (zerohop/frame_input.hpp): a program's frames as a source, in process. The queue holds
// the slots' leases themselves: a committed slot's lease is queued, next() hands that lease to the
// pipeline, and destroying it (the pipeline done, or a drop) puts the slot back on the free list.
#include "zerohop/frame_input.hpp"

#include <algorithm>
#include <condition_variable>
#include <cstring>
#include <deque>
#include <mutex>
#include <vector>

#include "input_device.hpp"
#include "zerohop/clock.hpp"
#include "zerohop/error.hpp"

namespace zerohop {
namespace {

// Frames the pipeline may hold at once past the input queue: the capture thread's, its 2-deep encode
// queue and the frame being converted.
constexpr std::uint32_t kPipelineHold = 4;

std::string layoutText(const FrameInputConfig& c) {
  return std::string(formatName(c.format)) + " " + std::to_string(c.width) + "x" + std::to_string(c.height);
}

}  // namespace

class FrameInputCore final : public SlotOwner, public std::enable_shared_from_this<FrameInputCore> {
 public:
  explicit FrameInputCore(const FrameInputConfig& config) : config_(config) {}

  ~FrameInputCore() override {
    device_.reset();  // waits for copies still in flight on its stream
    for (void* base : bases_) allocator_->deallocate(base, layout_.totalBytes);
  }

  void open(const SourceOptions& options) {
    std::lock_guard lock(mutex_);
    if (!bases_.empty()) throw Error(Errc::kInvalidArgument, "FrameInput: its source is already open (one pipeline reads it)");
    const std::uint32_t count = std::max<std::uint32_t>(config_.slots, 1) + kPipelineHold + 1;
    if (config_.memory == MemoryKind::kDevice) {
      device_ = InputDevice::open(config_.cudaDevice, count);
      allocator_ = device_->allocator();
      layout_ = computeLayout(config_.format, config_.width, config_.height, 256);
    } else {
      allocator_ = options.allocatorFactory ? options.allocatorFactory() : makeHostAllocator();
      layout_ = computeLayout(config_.format, config_.width, config_.height, 64);
    }
    for (std::uint32_t i = 0; i < count; ++i) {
      bases_.push_back(static_cast<std::uint8_t*>(allocator_->allocate(layout_.totalBytes)));
      free_.push_back(i);
    }
    memory_ = allocator_->kind();
  }

  MemoryKind memory() const {
    std::lock_guard lock(mutex_);
    return memory_;
  }

  InputSlot acquire() {
    const auto deadline = std::chrono::steady_clock::now() + config_.acquireTimeout;
    for (;;) {
      FrameLease dropped;  // destroyed outside the lock: its release takes the lock
      {
        std::unique_lock lock(mutex_);
        if (bases_.empty())
          throw Error(Errc::kUnavailable, "FrameInput: no pipeline reads this input yet (give it to a Pipeline or FrameStream first)");
        if (!free_.empty()) {
          const std::uint32_t slot = free_.back();
          free_.pop_back();
          Frame f;
          f.format = config_.format;
          f.width = config_.width;
          f.height = config_.height;
          f.color = config_.color;
          bindLayout(f, layout_, bases_[slot], memory_);
          if (device_) f.gpu.device = device_->device();
          return InputSlot(FrameLease(shared_from_this(), slot, f), this);
        }
        if (!queue_.empty()) {  // every slot queued or held: the oldest queued frame gives way
          dropped = std::move(queue_.front());
          queue_.pop_front();
          ++dropped_;
        } else if (!released_.wait_until(lock, deadline, [&] { return !free_.empty() || !queue_.empty(); })) {
          throw Error(Errc::kUnavailable, "FrameInput: all " + std::to_string(bases_.size()) +
                                              " slots stayed held for " + std::to_string(config_.acquireTimeout.count()) +
                                              " ms: commit or drop the slots you acquired");
        }
      }
    }
  }

  /// Queues `slot` with `meta`'s metadata; `readyEvent`: the slot's event for device slots.
  void queue(InputSlot&& slot, const Frame& meta, void* readyEvent) {
    FrameLease lease = std::move(slot.lease_);
    Frame& f = lease.frame();
    f.sequence = meta.sequence;
    f.wallClockMs = meta.wallClockMs ? meta.wallClockMs : realtimeNs() / 1'000'000;
    f.times = meta.times;
    if (f.times.at(Stage::kCapture) == 0) f.times.mark(Stage::kCapture, monotonicNs());
    f.keyframe = meta.keyframe;
    f.bytesUsed = layout_.totalBytes;
    f.gpu.readyEvent = readyEvent;
    FrameLease dropped;
    {
      std::lock_guard lock(mutex_);
      ++committed_;
      if (closed_) return;  // nobody reads any more: the lease goes back as it leaves
      queue_.push_back(std::move(lease));
      if (queue_.size() > std::max<std::uint32_t>(config_.slots, 1)) {
        dropped = std::move(queue_.front());
        queue_.pop_front();
        ++dropped_;
      }
    }
    queued_.notify_one();
    released_.notify_all();  // an acquire waiting for a slot may take this frame's place instead
  }

  void commit(InputSlot&& slot, const Frame& meta, void* cudaStream) {
    check(slot, "commit");
    void* event = nullptr;
    if (device_) {
      const std::uint32_t index = slot.lease_.slot();
      if (cudaStream) {
        event = device_->recordOn(index, cudaStream);
      } else if (meta.gpu.readyEvent) {
        event = device_->recordAfter(index, meta.gpu.readyEvent);
      } else {
        slot = InputSlot();  // given back
        throw Error(Errc::kInvalidArgument, "FrameInput: a device slot's commit needs meta.gpu.readyEvent (a cudaEvent_t "
                                            "recorded after your write) or the cudaStream that wrote it");
      }
    }
    queue(std::move(slot), meta, event);
  }

  void publish(const Frame& frame, void* cudaStream) {
    if (frame.format != config_.format || frame.width != config_.width || frame.height != config_.height)
      throw Error(Errc::kInvalidArgument, "FrameInput takes " + layoutText(config_) + " frames; got " +
                                              std::string(formatName(frame.format)) + " " + std::to_string(frame.width) +
                                              "x" + std::to_string(frame.height));
    if (frame.memory == MemoryKind::kDevice && !device_)
      throw Error(Errc::kUnsupported, "FrameInput has host-memory slots: publish host or pinned frames, or make it "
                                      "with memory kDevice to take device frames");
    const ImageLayout tight = computeLayout(frame.format, frame.width, frame.height, 1);
    for (std::uint32_t i = 0; i < tight.planeCount; ++i) {
      if (!frame.data[i] || frame.pitch[i] < tight.planes[i].widthBytes)
        throw Error(Errc::kInvalidArgument, "FrameInput::publish: plane " + std::to_string(i) +
                                                " has no data or a pitch shorter than a row");
    }
    InputSlot slot = acquire();
    Frame& dst = slot.frame();
    void* event = nullptr;
    if (device_) {
      event = device_->copyIn(slot.lease_.slot(), frame, dst, cudaStream);
    } else {
      for (std::uint32_t i = 0; i < tight.planeCount; ++i) {
        const PlaneLayout& p = tight.planes[i];
        for (std::uint32_t r = 0; r < p.rows; ++r)
          std::memcpy(dst.data[i] + std::size_t{r} * dst.pitch[i], frame.data[i] + std::size_t{r} * frame.pitch[i], p.widthBytes);
      }
    }
    {
      std::lock_guard lock(mutex_);
      for (std::uint32_t i = 0; i < tight.planeCount; ++i)
        bytesCopied_ += std::uint64_t{tight.planes[i].widthBytes} * tight.planes[i].rows;
    }
    queue(std::move(slot), frame, event);
  }

  std::optional<FrameLease> next(std::chrono::milliseconds timeout) {
    std::unique_lock lock(mutex_);
    if (!queued_.wait_for(lock, timeout, [&] { return !queue_.empty() || closed_; }) || queue_.empty())
      return std::nullopt;
    FrameLease lease = std::move(queue_.front());
    queue_.pop_front();
    ++delivered_;
    lease.frame().times.mark(Stage::kIngest, monotonicNs());
    return lease;
  }

  void close() noexcept {
    std::deque<FrameLease> left;
    {
      std::lock_guard lock(mutex_);
      closed_ = true;
      left.swap(queue_);
    }
    queued_.notify_all();
  }

  void releaseSlot(std::uint32_t slot) noexcept override {
    {
      std::lock_guard lock(mutex_);
      free_.push_back(slot);
    }
    released_.notify_one();
  }

  FrameInputStats stats() const {
    std::lock_guard lock(mutex_);
    return {committed_, dropped_, static_cast<std::uint32_t>(bases_.size()), bytesCopied_};
  }
  std::uint64_t delivered() const {
    std::lock_guard lock(mutex_);
    return delivered_;
  }
  const FrameInputConfig& config() const noexcept { return config_; }

 private:
  void check(const InputSlot& slot, const char* what) const {
    if (!slot) throw Error(Errc::kInvalidArgument, std::string("FrameInput::") + what + ": the slot is empty (committed already?)");
    if (slot.input_ != this)
      throw Error(Errc::kInvalidArgument, std::string("FrameInput::") + what + ": the slot belongs to another FrameInput");
  }

  const FrameInputConfig config_;
  std::unique_ptr<InputDevice> device_;  // device slots: their events and copies
  std::unique_ptr<FrameAllocator> allocator_;
  ImageLayout layout_{};
  MemoryKind memory_ = MemoryKind::kHost;
  mutable std::mutex mutex_;
  std::condition_variable queued_;    // a frame was queued, or the input closed
  std::condition_variable released_;  // a slot went back on the free list
  std::vector<std::uint8_t*> bases_;
  std::vector<std::uint32_t> free_;
  std::deque<FrameLease> queue_;  // committed, oldest first
  bool closed_ = false;
  std::uint64_t committed_ = 0, dropped_ = 0, delivered_ = 0, bytesCopied_ = 0;
};

namespace {

/// The FrameSource a pipeline reads: the input's queue. Thread-bound (next() on the capture thread),
/// counters() thread-safe.
class FrameInputSource final : public FrameSource {
 public:
  explicit FrameInputSource(std::shared_ptr<FrameInputCore> core) : core_(std::move(core)) {
    const FrameInputConfig& c = core_->config();
    info_.format = c.format;
    info_.width = c.width;
    info_.height = c.height;
    info_.fps = c.fps;
    info_.color = c.color;
    info_.memory = core_->memory();
    info_.description = c.name + " " + layoutText(c) + "@" + std::to_string(static_cast<int>(c.fps + 0.5)) + " (" +
                        memoryKindName(info_.memory) + " memory, in process)";
  }
  SourceInfo info() const override { return info_; }
  std::optional<FrameLease> next(std::chrono::milliseconds timeout) override { return core_->next(timeout); }
  SourceCounters counters() const override {
    SourceCounters c;
    c.frames = core_->delivered();
    c.drops = core_->stats().dropped;
    return c;
  }

 private:
  std::shared_ptr<FrameInputCore> core_;
  SourceInfo info_;
};

}  // namespace

FrameInput::FrameInput(const FrameInputConfig& config) {
  if (isCompressed(config.format) || config.format == PixelFormat::kUnknown)
    throw Error(Errc::kInvalidArgument, "FrameInput takes raw frames; got " + std::string(formatName(config.format)));
  if (config.fps <= 0 || config.fps > 240) throw Error(Errc::kInvalidArgument, "FrameInput: fps must be in (0, 240]");
  if (config.memory != MemoryKind::kHost && config.memory != MemoryKind::kDevice)
    throw Error(Errc::kInvalidArgument, "FrameInput: memory must be kHost or kDevice");
  if (config.width < 16 || config.height < 16 || config.width > 8192 || config.height > 8192)
    throw Error(Errc::kInvalidArgument, "FrameInput: size " + std::to_string(config.width) + "x" +
                                            std::to_string(config.height) + " is outside 16x16..8192x8192");
  core_ = std::make_shared<FrameInputCore>(config);
}

FrameInput::~FrameInput() { core_->close(); }

InputSlot FrameInput::acquireWrite() { return core_->acquire(); }
void FrameInput::commit(InputSlot&& slot, const Frame& meta) { core_->commit(std::move(slot), meta, nullptr); }
void FrameInput::commit(InputSlot&& slot, const Frame& meta, void* cudaStream) {
  core_->commit(std::move(slot), meta, cudaStream);
}
void FrameInput::publish(const Frame& frame) { core_->publish(frame, nullptr); }
void FrameInput::publish(const Frame& frame, void* cudaStream) { core_->publish(frame, cudaStream); }
FrameInputStats FrameInput::stats() const { return core_->stats(); }

std::unique_ptr<FrameSource> FrameInput::openSource(const SourceOptions& options) {
  core_->open(options);
  return std::make_unique<FrameInputSource>(core_);
}

}  // namespace zerohop
