#include "rendition_encodes.hpp"

#include <ctime>
#include <optional>
#include <tuple>
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
                                   RenditionNvenc nvenc, bool vp8)
    : config_(std::move(config)),
      scaledMemory_(std::move(scaledMemory)),
      nvenc_(std::move(nvenc)),
      vp8_(vp8),
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
    rung->index = i;
    rung->vp8.codec = Codec::kVP8;
    rungs_.push_back(std::move(rung));
  }
  if (!vp8_) return;
  vp8Status_ = status_;
  for (RenditionStatus& s : vp8Status_) s.codec = Codec::kVP8;
}

RenditionStatus& RenditionEncodes::statusOf(const Rung& rung, const Encode& e) {
  return (e.codec == Codec::kVP8 ? vp8Status_ : status_)[rung.index];
}

void RenditionEncodes::encode(const Frame* frame, std::uint32_t forceRungs,
                              std::uint32_t forceVp8Rungs) noexcept {
  for (auto& r : rungs_) {
    Rung& rung = *r;
    const std::uint8_t index = static_cast<std::uint8_t>(rung.index);
    const bool h264 = keepWanted(rung, rung.h264, TrackKey{Codec::kH264, index});
    const bool vp8 = vp8_ && keepWanted(rung, rung.vp8, TrackKey{Codec::kVP8, index});
    if (!frame || !((h264 && !rung.h264.failed) || (vp8 && !rung.vp8.failed))) continue;
    encodeRung(rung, *frame, h264, vp8, index < 32 && (forceRungs >> index & 1u) != 0,
               index < 32 && (forceVp8Rungs >> index & 1u) != 0);
  }
}

bool RenditionEncodes::keepWanted(Rung& rung, Encode& e, TrackKey track) {
  if (demand_.wanted(track)) return true;
  if (e.encoder || e.failed) {
    e.encoder.reset();
    e.failed = false;
    e.nvenc = false;
    log::info("encoder: rendition ", rung.index, " (", rung.size.width, "x", rung.size.height,
              track.codec == Codec::kVP8 ? ", VP8" : "", ") stopped (no viewer on it)");
    std::lock_guard lock(mutex_);
    RenditionStatus& s = statusOf(rung, e);
    s.running = false;
    s.encoderKbps = 0;
    s.encoder.clear();
  }
  return false;
}

void RenditionEncodes::open(Rung& rung, Encode& e, TrackKey track, std::uint32_t kbps) {
  EncoderConfig config = config_;
  config.width = rung.size.width;
  config.height = rung.size.height;
  config.bitrateKbps = kbps;
  const std::string size = std::to_string(rung.size.width) + "x" + std::to_string(rung.size.height);
  e.nvenc = false;
  if (track.codec == Codec::kVP8) {
    config.encoder = "vp8";
  } else if (nvenc_.gpuDevice >= 0) {
    EncoderConfig nvenc = config;
    nvenc.encoder = "nvenc";
    nvenc.inputFormat = PixelFormat::kNV12;
    nvenc.inputMemory = MemoryKind::kDevice;
    nvenc.gpuDevice = nvenc_.gpuDevice;
    try {
      e.encoder = makeEncoder(nvenc);  // its first unit is an IDR
      e.nvenc = true;
    } catch (const Error& err) {
      log::warn("encoder: rendition ", rung.index, " (", size, "): no NVENC session (", err.what(),
                "); x264 encodes it from a host copy of its scaled picture (a GeForce card opens a few NVENC "
                "sessions at once, and each rung of each camera is one)");
    }
  }
  if (!e.nvenc) e.encoder = makeEncoder(config);
  // The scaled picture the encoder reads: NV12 in VRAM for NVENC (pitch aligned as the GPU path's
  // frames), I420 in scaledMemory_ for x264 and VP8; each made once, when first needed.
  if (e.nvenc && !rung.onDevice) {
    rung.onDevice = std::make_unique<BufferPool>(
        computeLayout(PixelFormat::kNV12, rung.size.width, rung.size.height, 256), kScaledSlots,
        nvenc_.memory());
  }
  if (!e.nvenc && !rung.onHost) {
    rung.onHost =
        std::make_unique<BufferPool>(computeLayout(PixelFormat::kI420, rung.size.width, rung.size.height, 64),
                                     kScaledSlots, scaledMemory_());
  }
  e.appliedKbps = kbps;
  e.rateChangedNs = monotonicNs();
  log::info("encoder: rendition ", rung.index, " (", size, ") started at ", kbps, " kb/s for its ",
            track.codec == Codec::kVP8 ? "VP8 " : "", "viewers (", e.encoder->name(), ")");
  std::lock_guard lock(mutex_);
  RenditionStatus& s = statusOf(rung, e);
  s.running = true;
  ++s.starts;
  s.encoderKbps = kbps;
  s.encoder = track.codec == Codec::kVP8 ? "libvpx" : e.nvenc ? "h264_nvenc" : "libx264";
}

void RenditionEncodes::followTarget(Rung& rung, Encode& e, std::uint32_t targetKbps) {
  if (targetKbps == 0 || targetKbps == e.appliedKbps) return;
  const std::int64_t now = monotonicNs();
  // NVENC: each change costs an IDR, so the target is followed in steps (nvenc_rate_steps.hpp).
  if (e.nvenc && !NvencRateSteps::apply(e.appliedKbps, targetKbps, now, e.rateChangedNs)) return;
  e.encoder->setBitrate(targetKbps);
  e.appliedKbps = targetKbps;
  e.rateChangedNs = now;
  std::lock_guard lock(mutex_);
  statusOf(rung, e).encoderKbps = targetKbps;
}

// Scales the frame once into each picture the rung's wanted encodes read, then encodes it with each.
void RenditionEncodes::encodeRung(Rung& rung, const Frame& frame, bool wantH264, bool wantVp8, bool forceH264,
                                  bool forceVp8) {
  const std::uint8_t index = static_cast<std::uint8_t>(rung.index);
  const TrackKey h264{Codec::kH264, index}, vp8{Codec::kVP8, index};
  std::optional<FrameLease> host, device;  // the scaled pictures of this frame, made when first asked for
  auto picture = [&](bool onDevice) -> const Frame& {
    std::optional<FrameLease>& lease = onDevice ? device : host;
    if (!lease) {
      BufferPool& pool = onDevice ? *rung.onDevice : *rung.onHost;
      lease = pool.tryAcquire();
      // Cannot happen: the one slot goes back before encode() returns.
      if (!lease)
        throw Error(Errc::kInternal, "no free scaling buffer for rendition " + std::to_string(rung.index));
      scaler_->scale(frame, lease->frame());
    }
    return lease->frame();
  };
  for (auto [e, track, wanted, force] :
       {std::tuple{&rung.h264, h264, wantH264, forceH264}, std::tuple{&rung.vp8, vp8, wantVp8, forceVp8}}) {
    if (!wanted || e->failed) continue;
    const std::int64_t cpu0 = threadCpuNs();
    try {
      const std::uint32_t target = demand_.targetKbps(track);
      bool forceKeyframe = force;
      if (!e->encoder) {
        open(rung, *e, track, target != 0 ? target : rung.size.maxKbps);
        forceKeyframe = false;  // its first unit is a keyframe
      } else {
        followTarget(rung, *e, target);
      }
      encodeOne(rung, *e, track, picture(e->nvenc), forceKeyframe);
    } catch (const Error& err) {
      e->failed = true;
      e->encoder.reset();
      e->nvenc = false;
      log::error("encoder: rendition ", rung.index, " (", rung.size.width, "x", rung.size.height,
                 track.codec == Codec::kVP8 ? ", VP8" : "",
                 ") stopped, so its viewers get no picture until they move: ", err.what());
    }
    std::lock_guard lock(mutex_);
    statusOf(rung, *e).encodeCpuNs += threadCpuNs() - cpu0;
  }
}

void RenditionEncodes::encodeOne(Rung& rung, Encode& e, TrackKey track, const Frame& picture,
                                 bool forceKeyframe) {
  EncodedUnitPtr unit = e.encoder->encode(picture, forceKeyframe);
  if (forceKeyframe) {
    std::lock_guard lock(mutex_);
    ++statusOf(rung, e).keyframesForced;
  }
  if (!unit) return;
  // The encoder made this unit and nobody else holds it yet: it is marked with its rung before it is shared.
  std::const_pointer_cast<EncodedUnit>(unit)->rendition = static_cast<std::uint8_t>(rung.index);
  {
    std::lock_guard lock(mutex_);
    ++statusOf(rung, e).units;
    if (unit->keyframe) ++statusOf(rung, e).keyframes;
  }
  demand_.deliver(track, unit);
}

std::vector<RenditionStatus> RenditionEncodes::status() const {
  std::lock_guard lock(mutex_);
  return status_;
}

std::vector<RenditionStatus> RenditionEncodes::vp8Status() const {
  std::lock_guard lock(mutex_);
  return vp8Status_;
}

}  // namespace zerohop
