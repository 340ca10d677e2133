#include "rendition_encodes.hpp"

#include <ctime>
#include <utility>

#include "zerohop/error.hpp"
#include "zerohop/log.hpp"

namespace zerohop {
namespace {

// One slot per rung: it is scaled into and encoded from on the encode thread before the next frame.
constexpr std::uint32_t kScaledSlots = 1;

std::int64_t threadCpuNs() noexcept {
  timespec ts{};
  ::clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<std::int64_t>(ts.tv_sec) * 1'000'000'000 + ts.tv_nsec;
}

}  // namespace

RenditionEncodes::RenditionEncodes(std::vector<Rendition> ladder, EncoderConfig config,
                                   std::unique_ptr<FrameScaler> scaler, Demand demand,
                                   const std::function<std::unique_ptr<FrameAllocator>()>& scaledMemory)
    : config_(std::move(config)), scaler_(std::move(scaler)), demand_(std::move(demand)) {
  config_.inputFormat = PixelFormat::kI420;
  config_.inputMemory = MemoryKind::kHost;
  for (std::size_t i = 0; i < ladder.size(); ++i) {
    RenditionStatus s;
    s.size = ladder[i];
    s.running = i == 0;
    status_.push_back(s);
    if (i == 0) continue;
    rungs_.push_back(std::unique_ptr<Rung>(new Rung{
        ladder[i], BufferPool(computeLayout(PixelFormat::kI420, ladder[i].width, ladder[i].height, 64), kScaledSlots,
                              scaledMemory()),
        nullptr, 0, false}));
  }
}

void RenditionEncodes::encode(const Frame* frame, std::uint32_t forceRungs) noexcept {
  for (std::size_t i = 0; i < rungs_.size(); ++i) {
    Rung& rung = *rungs_[i];
    const std::size_t index = i + 1;
    if (!demand_.wanted(index)) {
      if (rung.encoder || rung.failed) {
        rung.encoder.reset();
        rung.failed = false;
        log::info("encoder: rendition ", index, " (", rung.size.width, "x", rung.size.height, ") stopped (no viewer on it)");
        std::lock_guard lock(mutex_);
        status_[index].running = false;
        status_[index].encoderKbps = 0;
      }
      continue;
    }
    if (!frame || rung.failed) continue;
    const std::int64_t cpu0 = threadCpuNs();
    try {
      encodeRung(index, rung, *frame, index < 32 && (forceRungs >> index & 1u) != 0);
    } catch (const Error& e) {
      rung.failed = true;
      rung.encoder.reset();
      log::error("encoder: rendition ", index, " (", rung.size.width, "x", rung.size.height,
                 ") stopped, so its viewers get no picture until they move: ", e.what());
    }
    std::lock_guard lock(mutex_);
    status_[index].encodeCpuNs += threadCpuNs() - cpu0;
  }
}

void RenditionEncodes::encodeRung(std::size_t index, Rung& rung, const Frame& frame, bool forceKeyframe) {
  const std::uint32_t target = demand_.targetKbps(index);
  if (!rung.encoder) {
    EncoderConfig config = config_;
    config.width = rung.size.width;
    config.height = rung.size.height;
    config.bitrateKbps = target != 0 ? target : rung.size.maxKbps;
    rung.encoder = makeEncoder(config);  // its first unit is an IDR
    rung.appliedKbps = config.bitrateKbps;
    forceKeyframe = false;
    log::info("encoder: rendition ", index, " (", rung.size.width, "x", rung.size.height, ") started at ",
              rung.appliedKbps, " kb/s for its viewers");
    std::lock_guard lock(mutex_);
    status_[index].running = true;
    ++status_[index].starts;
    status_[index].encoderKbps = rung.appliedKbps;
  } else if (target != 0 && target != rung.appliedKbps) {
    rung.encoder->setBitrate(target);
    rung.appliedKbps = target;
    std::lock_guard lock(mutex_);
    status_[index].encoderKbps = target;
  }
  auto slot = rung.scaled.tryAcquire();
  // Cannot happen: the one slot goes back before this returns.
  if (!slot) throw Error(Errc::kInternal, "no free scaling buffer for rendition " + std::to_string(index));
  scaler_->scale(frame, slot->frame());
  EncodedUnitPtr unit = rung.encoder->encode(slot->frame(), forceKeyframe);
  if (forceKeyframe) {
    std::lock_guard lock(mutex_);
    ++status_[index].keyframesForced;
  }
  if (!unit) return;
  // The encoder made this unit and nobody else holds it yet: it is marked with its rung before it is shared.
  std::const_pointer_cast<EncodedUnit>(unit)->rendition = static_cast<std::uint8_t>(index);
  {
    std::lock_guard lock(mutex_);
    ++status_[index].units;
    if (unit->keyframe) ++status_[index].keyframes;
  }
  demand_.deliver(index, unit);
}

std::vector<RenditionStatus> RenditionEncodes::status() const {
  std::lock_guard lock(mutex_);
  return status_;
}

}  // namespace zerohop
