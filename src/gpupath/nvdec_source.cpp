// NvdecSource (nvdec_source.hpp): an H.264 or H.265 source decoded by NVDEC (GpuH264Decoder) into a device
// pool.
#include "gpupath/nvdec_source.hpp"

#include <algorithm>
#include <atomic>
#include <optional>
#include <string>

#include "zerohop/buffer_pool.hpp"
#include "zerohop/clock.hpp"
#include "zerohop/error.hpp"
#include "zerohop/gpu.hpp"
#include "zerohop/gpu_decode.hpp"
#include "zerohop/log.hpp"

namespace zerohop::gpupath {
namespace {

// Slots the pipeline may hold at once (the frame in the share copy and in the encoder, one queued),
// plus the one being written.
constexpr std::uint32_t kSlots = 6;

class NvdecSource final : public FrameSource {
 public:
  NvdecSource(std::unique_ptr<FrameSource> h264, int device, GpuDecodeCodec codec)
      : h264_(std::move(h264)), decoder_(device < 0 ? 0 : device, codec) {
    info_ = h264_->info();
    const bool h265 = codec == GpuDecodeCodec::kH265;
    if (info_.format != PixelFormat::kH264 && !(h265 && info_.format == PixelFormat::kUnknown))
      throw Error(Errc::kInternal, std::string("NvdecSource takes an ") + (h265 ? "H.265" : "H.264") +
                                       " source, not " + std::string(formatName(info_.format)));
    if (info_.width == 0 || info_.height == 0)
      throw Error(Errc::kUnsupported,
                  info_.description + " did not say its picture size; NVDEC's frames need it up front");
    info_.format = PixelFormat::kNV12;
    info_.memory = MemoryKind::kDevice;
    info_.description += ", decoded to NV12 in VRAM by NVDEC";
    // One slot more than is lent out: a picture that finds every slot held is decoded into it and
    // dropped, so the decoder never misses a reference picture.
    pool_.emplace(computeLayout(PixelFormat::kNV12, info_.width, info_.height, 256), kSlots + 1,
                  makeDeviceAllocator(decoder_.device()));
    spare_ = pool_->tryAcquire();
  }

  SourceInfo info() const override { return info_; }

  std::optional<FrameLease> next(std::chrono::milliseconds timeout) override {
    const std::int64_t deadline = monotonicNs() + std::chrono::nanoseconds(timeout).count();
    for (;;) {
      const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
          std::chrono::nanoseconds(std::max<std::int64_t>(deadline - monotonicNs(), 0)));
      auto unit = h264_->next(left);
      if (!unit) return std::nullopt;
      std::optional<FrameLease> slot = pool_->tryAcquire();
      const bool toSpare = !slot;
      FrameLease& dst = toSpare ? *spare_ : *slot;
      bool produced = false;
      try {
        produced = decoder_.decode(unit->frame(), dst.frame());
      } catch (const Error& e) {
        if (e.code() == Errc::kUnsupported) throw;  // the camera's stream: no later unit decodes either
        if (e.code() == Errc::kInvalidArgument) {
          throw Error(Errc::kUnsupported, info_.description + " sends " + std::to_string(decoder_.width()) +
                                              "x" + std::to_string(decoder_.height()) +
                                              " pictures, not the " + std::to_string(info_.width) + "x" +
                                              std::to_string(info_.height) +
                                              " it announced; open the camera again");
        }
        countDrop(e.what());
      }
      unit->reset();  // the access unit goes back to its source: the slot holds the picture
      if (produced && toSpare) countDrop("every decoded frame is still held downstream");
      if (produced && !toSpare) return std::move(*slot);
      if (monotonicNs() >= deadline) return std::nullopt;
    }
  }

  SourceCounters counters() const override {
    SourceCounters c = h264_->counters();
    c.drops += drops_.load(std::memory_order_relaxed);
    return c;
  }

  bool requestKeyframe() override { return h264_->requestKeyframe(); }

 private:
  void countDrop(const std::string& why) {
    drops_.fetch_add(1, std::memory_order_relaxed);
    if (monotonicNs() - lastLogNs_ > 1'000'000'000) {
      lastLogNs_ = monotonicNs();
      log::warn(info_.description, ": ", why, "; frame dropped, the picture recovers at the next IDR");
    }
  }

  std::unique_ptr<FrameSource> h264_;
  SourceInfo info_;
  std::optional<BufferPool> pool_;
  std::optional<FrameLease> spare_;
  GpuH264Decoder decoder_;  // after the pool: destroyed first, it waits for its copies into the slots
  std::int64_t lastLogNs_ = 0;
  std::atomic<std::uint64_t> drops_{0};
};

}  // namespace

void requireNvdec(int device) {
  const NvdecInfo nvdec = probeNvdec(device);
  if (!nvdec.available)
    throw Error(Errc::kUnavailable, "NVDEC cannot decode H.264 here (" + nvdec.reason +
                                        "); decode on the CPU with format=i420 instead");
}

std::unique_ptr<FrameSource> makeNvdecSource(std::unique_ptr<FrameSource> h264, int device,
                                             GpuDecodeCodec codec) {
  requireNvdec(device);
  return std::make_unique<NvdecSource>(std::move(h264), device, codec);
}

}  // namespace zerohop::gpupath
