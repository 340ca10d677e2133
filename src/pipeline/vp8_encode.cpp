#include "vp8_encode.hpp"

#include <ctime>
#include <utility>

#include "zerohop/clock.hpp"
#include "zerohop/error.hpp"
#include "zerohop/log.hpp"

namespace zerohop {
namespace {

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

Vp8Encode::Vp8Encode(EncoderConfig config) : config_(std::move(config)) {
  config_.encoder = "vp8";
  config_.inputFormat = PixelFormat::kI420;
  config_.inputMemory = MemoryKind::kHost;
  status_.available = true;
}

EncodedUnitPtr Vp8Encode::step(const Frame* frame, bool wanted, bool forceKeyframe) noexcept {
  if (!wanted) {
    if (encoder_) {
      const EncoderStats last = encoder_->stats();
      encoder_.reset();
      std::lock_guard lock(mutex_);
      finished_ = sum(finished_, last);
      status_.encoder = finished_;
      status_.running = false;
      log::info("encoder: VP8 stopped (no viewer receives VP8)");
    }
    return nullptr;
  }
  if (!frame) return nullptr;
  if (!encoder_) {
    {
      std::lock_guard lock(mutex_);
      if (!status_.available) return nullptr;  // it failed to open once: not retried every frame
    }
    try {
      encoder_ = makeEncoder(config_);
    } catch (const Error& e) {
      log::error("encoder: VP8 cannot open, so viewers without H.264 get no picture: ", e.what());
      std::lock_guard lock(mutex_);
      status_.available = false;
      status_.unavailableReason = e.what();
      return nullptr;
    }
    std::lock_guard lock(mutex_);
    status_.running = true;
    status_.encoderName = encoder_->name();
    ++status_.starts;
    log::info("encoder: VP8 started for viewers without H.264 (", status_.encoderName, ")");
  }
  const std::int64_t wall0 = monotonicNs();
  const std::int64_t cpu0 = threadCpuNs();
  EncodedUnitPtr unit;
  try {
    unit = encoder_->encode(*frame, forceKeyframe);
  } catch (const Error& e) {
    log::warn("encoder: VP8 dropped frame ", frame->sequence, ": ", e.what());
  }
  const std::int64_t cpu = threadCpuNs() - cpu0;
  const std::int64_t wall = monotonicNs() - wall0;
  std::lock_guard lock(mutex_);
  status_.encoder = sum(finished_, encoder_->stats());
  status_.encodeCpuNs += cpu;
  status_.encodeWallNs += wall;
  return unit;
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
