#include "vp8_encode.hpp"

#include <ctime>
#include <utility>

#include "zerohop/clock.hpp"
#include "zerohop/error.hpp"
#include "zerohop/log.hpp"

namespace zerohop {
namespace {

using namespace std::chrono_literals;

constexpr std::uint32_t kCopySlots = 3;

std::int64_t threadCpuNs() noexcept {
  timespec ts{};
  ::clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<std::int64_t>(ts.tv_sec) * 1'000'000'000 + ts.tv_nsec;
}

EncoderStats sum(EncoderStats a, const EncoderStats& b) {
  a.framesIn += b.framesIn;
  a.unitsOut += b.unitsOut;
  a.emptyOutputs += b.emptyOutputs;
  a.keyframes += b.keyframes;
  a.bytesOut += b.bytesOut;
  return a;
}

}  // namespace

Vp8Encode::Vp8Encode(EncoderConfig config, std::function<void(const EncodedUnitPtr&)> deliver)
    : config_(std::move(config)),
      deliver_(std::move(deliver)),
      copies_(computeLayout(PixelFormat::kI420, config_.width, config_.height, 64), kCopySlots, makeHostAllocator()) {
  config_.encoder = "vp8";
  config_.inputFormat = PixelFormat::kI420;
  config_.inputMemory = MemoryKind::kHost;
  status_.available = true;
  thread_ = std::thread([this] { run(); });
}

void Vp8Encode::offer(const Frame* frame, bool wanted, bool forceKeyframe) noexcept {
  if (forceKeyframe) keyframe_.store(true);
  wanted_.store(wanted);
  if (!wanted || !frame) return;
  if (!Vp8Input::takes(*frame) || frame->width != config_.width || frame->height != config_.height) return;
  auto copy = copies_.tryAcquire();
  if (!copy) return;  // cannot happen: one slot encoding, one waiting, this one (the queue drops the oldest)
  try {
    input_.fill(*frame, copy->frame());
  } catch (const Error& e) {
    log::warn("encoder: VP8 dropped frame ", frame->sequence, ": ", e.what());
    return;
  }
  queue_.push(std::move(*copy));
}

void Vp8Encode::stop() noexcept {
  queue_.close();
  if (thread_.joinable()) thread_.join();
  close();
}

void Vp8Encode::run() noexcept {
  for (;;) {
    auto in = queue_.pop(100ms);
    if (in) {
      encodeOne(*in);
      continue;
    }
    if (queue_.closed()) return;
    if (!wanted_.load()) close();  // no sink wants VP8 any more (a stall of the camera alone keeps it open)
  }
}

void Vp8Encode::close() noexcept {
  if (!encoder_) return;
  const EncoderStats last = encoder_->stats();
  encoder_.reset();
  std::lock_guard lock(mutex_);
  finished_ = sum(finished_, last);
  status_.encoder = finished_;
  status_.running = false;
  status_.encoderKbps = 0;
  log::info("encoder: VP8 stopped (no viewer receives VP8)");
}

void Vp8Encode::encodeOne(FrameLease& in) noexcept {
  if (!encoder_) {
    {
      std::lock_guard lock(mutex_);
      if (!status_.available) return;  // it failed to open once: not retried every frame
    }
    EncoderConfig config = config_;
    if (const std::uint32_t target = targetKbps_.load(); target != 0) config.bitrateKbps = target;  // where CC is now
    try {
      encoder_ = makeEncoder(config);
      appliedKbps_ = config.bitrateKbps;
    } catch (const Error& e) {
      log::error("encoder: VP8 cannot open, so viewers without H.264 get no picture: ", e.what());
      std::lock_guard lock(mutex_);
      status_.available = false;
      status_.unavailableReason = e.what();
      return;
    }
    keyframe_.store(false);  // a new encoder starts with one
    std::lock_guard lock(mutex_);
    status_.running = true;
    status_.encoderName = encoder_->name();
    ++status_.starts;
    status_.encoderKbps = appliedKbps_;
    log::info("encoder: VP8 started for viewers without H.264 (", status_.encoderName, ")");
  }
  followTarget();
  const std::int64_t wall0 = monotonicNs();
  const std::int64_t cpu0 = threadCpuNs();
  EncodedUnitPtr unit;
  try {
    unit = encoder_->encode(in.frame(), keyframe_.exchange(false));
  } catch (const Error& e) {
    log::warn("encoder: VP8 dropped frame ", in.frame().sequence, ": ", e.what());
  }
  const std::int64_t cpu = threadCpuNs() - cpu0;
  const std::int64_t wall = monotonicNs() - wall0;
  in.reset();
  {
    std::lock_guard lock(mutex_);
    status_.encoder = sum(finished_, encoder_->stats());
    status_.encodeCpuNs += cpu;
    status_.encodeWallNs += wall;
  }
  if (!unit) return;
  deliver_(unit);
  StageTimes times = unit->times;
  times.mark(Stage::kSend, monotonicNs());
  latency_.record(times);
}

// The VP8 viewers' target goes to the running encoder when it changed (libvpx: no keyframe).
void Vp8Encode::followTarget() noexcept {
  const std::uint32_t target = targetKbps_.load();
  if (!followTarget_ || target == 0 || target == appliedKbps_) return;
  try {
    encoder_->setBitrate(target);
    appliedKbps_ = target;
  } catch (const Error& e) {
    log::warn("encoder: VP8 cannot follow its viewers' bitrate (", e.what(), "); it stays at ", appliedKbps_, " kb/s");
    followTarget_ = false;
    return;
  }
  std::lock_guard lock(mutex_);
  status_.encoderKbps = appliedKbps_;
}

Vp8EncodeStatus Vp8Encode::status() const {
  Vp8EncodeStatus s;
  {
    std::lock_guard lock(mutex_);
    s = status_;
  }
  s.latency = latency_.snapshot();
  return s;
}

}  // namespace zerohop
