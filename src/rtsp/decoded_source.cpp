// DecodedH264Source (decoded_source.hpp): an H.264 or H.265 source's frames decoded into I420 on the CPU.
#include "rtsp/decoded_source.hpp"

extern "C" {
#include <libavutil/frame.h>
}

#include <algorithm>
#include <mutex>
#include <unordered_map>

#include "zerohop/clock.hpp"
#include "zerohop/error.hpp"
#include "zerohop/log.hpp"

namespace zerohop::rtsp {

/// The decoded pictures behind outstanding FrameLeases; releasing a lease drops its reference on the
/// picture (libavcodec's buffer pool takes it back). Thread-safe.
class DecodedH264Source::Pictures final : public SlotOwner {
 public:
  std::uint32_t hold(encode::AvFramePtr picture) {
    std::lock_guard lock(mutex_);
    const std::uint32_t id = next_++;
    held_.emplace(id, std::move(picture));
    return id;
  }
  void releaseSlot(std::uint32_t slot) noexcept override {
    encode::AvFramePtr dropped;
    std::lock_guard lock(mutex_);
    auto it = held_.find(slot);
    if (it == held_.end()) return;
    dropped = std::move(it->second);
    held_.erase(it);
  }

 private:
  std::mutex mutex_;
  std::uint32_t next_ = 0;
  std::unordered_map<std::uint32_t, encode::AvFramePtr> held_;
};

DecodedH264Source::DecodedH264Source(std::unique_ptr<FrameSource> h264, VideoCodec codec)
    : h264_(std::move(h264)), decoder_(codec), pictures_(std::make_shared<Pictures>()) {
  info_ = h264_->info();
  if (codec == VideoCodec::kH264 && info_.format != PixelFormat::kH264)
    throw Error(Errc::kInternal,
                "DecodedH264Source takes an H.264 source, not " + std::string(formatName(info_.format)));
  info_.format = PixelFormat::kI420;
  info_.memory = MemoryKind::kHost;
  info_.description += ", decoded to I420 on the CPU (libavcodec)";
}

DecodedH264Source::~DecodedH264Source() = default;

std::optional<FrameLease> DecodedH264Source::next(std::chrono::milliseconds timeout) {
  const std::int64_t deadline = monotonicNs() + std::chrono::nanoseconds(timeout).count();
  for (;;) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
        std::chrono::nanoseconds(std::max<std::int64_t>(deadline - monotonicNs(), 0)));
    auto unit = h264_->next(left);
    if (!unit) return std::nullopt;
    const Frame& in = unit->frame();
    encode::AvFramePtr picture;
    try {
      picture = decoder_.decode(in.data[0], in.bytesUsed);
    } catch (const Error& e) {
      if (e.code() == Errc::kUnsupported) throw;  // the camera's stream: no later unit decodes either
      decodeDrops_.fetch_add(1, std::memory_order_relaxed);
      if (monotonicNs() - lastErrorLogNs_ > 1'000'000'000) {
        lastErrorLogNs_ = monotonicNs();
        log::warn(info_.description, ": ", e.what(), "; frame dropped, the picture recovers at the next IDR");
      }
      if (monotonicNs() >= deadline) return std::nullopt;
      continue;
    }
    if (!picture) {
      if (monotonicNs() >= deadline) return std::nullopt;
      continue;
    }
    Frame f = i420View(*picture);
    f.sequence = in.sequence;
    f.keyframe = in.keyframe;
    f.times = in.times;
    f.wallClockMs = in.wallClockMs;
    unit->reset();  // the access unit goes back to its source: the picture holds the pixels
    const std::uint32_t id = pictures_->hold(std::move(picture));
    return FrameLease(pictures_, id, f);
  }
}

SourceCounters DecodedH264Source::counters() const {
  SourceCounters c = h264_->counters();
  c.drops += decodeDrops_.load(std::memory_order_relaxed);
  return c;
}

}  // namespace zerohop::rtsp
