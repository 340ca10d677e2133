#include "rendition_encodes.hpp"

#include <ctime>
#include <utility>

#include "nvenc_rate_steps.hpp"
#include "zerohop/clock.hpp"
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
                                   std::function<std::unique_ptr<FrameAllocator>()> scaledMemory,
                                   RenditionNvenc nvenc)
    : config_(std::move(config)),
      scaledMemory_(std::move(scaledMemory)),
      nvenc_(std::move(nvenc)),
      scaler_(std::move(scaler)),
      demand_(std::move(demand)) {
  config_.inputFormat = PixelFormat::kI420;
  config_.inputMemory = MemoryKind::kHost;
  for (std::size_t i = 0; i < ladder.size(); ++i) {
    RenditionStatus s;
    s.size = ladder[i];
    s.running = i == 0;
    status_.push_back(s);
    if (i == 0) continue;
    auto rung = std::make_unique<Rung>();
    rung->size = ladder[i];
    rungs_.push_back(std::move(rung));
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
        rung.nvenc = false;
        log::info("encoder: rendition ", index, " (", rung.size.width, "x", rung.size.height, ") stopped (no viewer on it)");
        std::lock_guard lock(mutex_);
        status_[index].running = false;
        status_[index].encoderKbps = 0;
        status_[index].encoder.clear();
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
      rung.nvenc = false;
      log::error("encoder: rendition ", index, " (", rung.size.width, "x", rung.size.height,
                 ") stopped, so its viewers get no picture until they move: ", e.what());
    }
    std::lock_guard lock(mutex_);
    status_[index].encodeCpuNs += threadCpuNs() - cpu0;
  }
}

void RenditionEncodes::open(std::size_t index, Rung& rung, std::uint32_t kbps) {
  EncoderConfig config = config_;
  config.width = rung.size.width;
  config.height = rung.size.height;
  config.bitrateKbps = kbps;
  const std::string size = std::to_string(rung.size.width) + "x" + std::to_string(rung.size.height);
  rung.nvenc = false;
  if (nvenc_.gpuDevice >= 0) {
    EncoderConfig nvenc = config;
    nvenc.encoder = "nvenc";
    nvenc.inputFormat = PixelFormat::kNV12;
    nvenc.inputMemory = MemoryKind::kDevice;
    nvenc.gpuDevice = nvenc_.gpuDevice;
    try {
      rung.encoder = makeEncoder(nvenc);  // its first unit is an IDR
      rung.nvenc = true;
    } catch (const Error& e) {
      log::warn("encoder: rendition ", index, " (", size, "): no NVENC session (", e.what(),
                "); x264 encodes it from a host copy of its scaled picture (a GeForce card opens a few NVENC "
                "sessions at once, and each rung of each camera is one)");
    }
  }
  if (!rung.nvenc) rung.encoder = makeEncoder(config);
  // The scaled picture the encoder reads: NV12 in VRAM for NVENC (pitch aligned as the GPU path's
  // frames), I420 in scaledMemory_ for x264; made again only when the kind changes.
  if (!rung.scaled || rung.scaledOnDevice != rung.nvenc) {
    rung.scaled.reset();
    rung.scaled = rung.nvenc ? std::make_unique<BufferPool>(
                                   computeLayout(PixelFormat::kNV12, rung.size.width, rung.size.height, 256),
                                   kScaledSlots, nvenc_.memory())
                             : std::make_unique<BufferPool>(
                                   computeLayout(PixelFormat::kI420, rung.size.width, rung.size.height, 64),
                                   kScaledSlots, scaledMemory_());
    rung.scaledOnDevice = rung.nvenc;
  }
  rung.appliedKbps = kbps;
  rung.rateChangedNs = monotonicNs();
  log::info("encoder: rendition ", index, " (", size, ") started at ", kbps, " kb/s for its viewers (",
            rung.encoder->name(), ")");
  std::lock_guard lock(mutex_);
  status_[index].running = true;
  ++status_[index].starts;
  status_[index].encoderKbps = kbps;
  status_[index].encoder = rung.nvenc ? "h264_nvenc" : "libx264";
}

void RenditionEncodes::followTarget(std::size_t index, Rung& rung, std::uint32_t targetKbps) {
  if (targetKbps == 0 || targetKbps == rung.appliedKbps) return;
  const std::int64_t now = monotonicNs();
  // NVENC: each change costs an IDR, so the target is followed in steps (nvenc_rate_steps.hpp).
  if (rung.nvenc && !NvencRateSteps::apply(rung.appliedKbps, targetKbps, now, rung.rateChangedNs)) return;
  rung.encoder->setBitrate(targetKbps);
  rung.appliedKbps = targetKbps;
  rung.rateChangedNs = now;
  std::lock_guard lock(mutex_);
  status_[index].encoderKbps = targetKbps;
}

void RenditionEncodes::encodeRung(std::size_t index, Rung& rung, const Frame& frame, bool forceKeyframe) {
  const std::uint32_t target = demand_.targetKbps(index);
  if (!rung.encoder) {
    open(index, rung, target != 0 ? target : rung.size.maxKbps);
    forceKeyframe = false;  // its first unit is an IDR
  } else {
    followTarget(index, rung, target);
  }
  auto slot = rung.scaled->tryAcquire();
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
