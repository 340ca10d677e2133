// ShareSource (share_source.hpp): a share's frames as source frames, leased in place.
#include "share_source.hpp"

#include <mutex>
#include <thread>
#include <unordered_map>

#include "core/setting_log.hpp"
#include "zerohop/clock.hpp"
#include "zerohop/error.hpp"
#include "zerohop/log.hpp"
#include "zerohop/setting_error.hpp"

namespace zerohop {

/// The SharedFrames behind outstanding FrameLeases, keyed by lease number: releasing a lease drops
/// its SharedFrame, which gives the share's slot back.
class ShareSource::Leases final : public SlotOwner {
 public:
  std::uint32_t hold(SharedFrame f) {
    std::lock_guard lock(mutex_);
    const std::uint32_t id = next_++;
    held_.emplace(id, std::move(f));
    return id;
  }
  void releaseSlot(std::uint32_t slot) noexcept override {
    SharedFrame dropped;
    {
      std::lock_guard lock(mutex_);
      auto it = held_.find(slot);
      if (it == held_.end()) return;
      dropped = std::move(it->second);
      held_.erase(it);
    }
  }

 private:
  std::mutex mutex_;
  std::uint32_t next_ = 0;
  std::unordered_map<std::uint32_t, SharedFrame> held_;
};

namespace {

constexpr std::int64_t kRetryNs = 200'000'000;  // reattach attempts to a publisher that went away

Subscriber connectWithin(const std::string& name, SubscribeOptions options, std::chrono::milliseconds timeout) {
  options.waitForPublisher = timeout;
  try {
    return Subscriber(name, options);
  } catch (const Error& e) {
    if (e.code() != Errc::kNotFound) throw;
    throw Error(Errc::kNotFound, std::string(e.what()) + ": start its publisher first (a process that publishes '" +
                                     name + "': zerohop::Publisher, zh_publisher_create, or a pipeline sharing its frames)");
  }
}

}  // namespace

ShareSource::ShareSource(const SourceSpec& spec, std::chrono::milliseconds openTimeout)
    : name_(spec.path), leases_(std::make_shared<Leases>()) {
  if (auto dir = spec.options.find("dir"); dir != spec.options.end()) options_.directory = dir->second;
  subscriber_.emplace(connectWithin(name_, options_, openTimeout));
  const ShareInfo& s = subscriber_->info();
  if (s.encoded && s.layout.format != PixelFormat::kH264)
    throw Error(Errc::kUnsupported, "share '" + name_ + "' holds " + std::string(formatName(s.layout.format)) +
                                        " units; a share source takes raw frames or H.264 (NAME.h264)");
  info_.format = s.layout.format;
  info_.width = s.layout.width;
  info_.height = s.layout.height;
  info_.memory = s.memory;  // device shares: the frames stay in VRAM, for the GPU path
  info_.fps = spec.fps;
  // The frame rate is the publisher's: learnt from its first frames unless the spec gives it.
  if (info_.fps <= 0) {
    std::int64_t first = 0, last = 0;
    int n = 0;
    for (int i = 0; i < 6; ++i) {
      auto f = subscriber_->next(std::chrono::milliseconds(500));
      if (!f) break;
      if (s.encoded && (info_.width == 0 || info_.height == 0)) {
        info_.width = f->frame().width;
        info_.height = f->frame().height;
      }
      info_.color = f->frame().color;
      (n == 0 ? first : last) = f->publishNs();
      ++n;
    }
    info_.fps = n >= 3 && last > first ? std::min(240.0, std::max(1.0, (n - 1) * 1e9 / double(last - first))) : 30.0;
    if (n < 3)
      log::warnAbout(setting::kSource, "share '", name_, "': too few frames to learn its rate; assuming ", info_.fps,
                     " fps (give its rate in the source, share:NAME?fps=N)");
  }
  info_.description = "share '" + name_ + "' (" + s.transport + ", publisher pid " + std::to_string(s.publisherPid) +
                      ") " + std::string(formatName(info_.format)) + " " + std::to_string(info_.width) + "x" +
                      std::to_string(info_.height) + "@" + std::to_string(static_cast<int>(info_.fps + 0.5));
}

ShareSource::~ShareSource() = default;

std::optional<FrameLease> ShareSource::next(std::chrono::milliseconds timeout) {
  const std::int64_t deadline = monotonicNs() + timeout.count() * 1'000'000;
  for (;;) {
    try {
      if (!subscriber_->connected()) {
        // The publisher went away: reattach when it is back, at most every kRetryNs.
        const std::int64_t now = monotonicNs();
        if (now - lastRetryNs_ >= kRetryNs) {
          lastRetryNs_ = now;
          subscriber_->reconnect();
          log::info("share '", name_, "': reattached to its publisher (pid ", subscriber_->info().publisherPid, ")");
        }
      }
      auto f = subscriber_->next(std::chrono::milliseconds(std::max<std::int64_t>(0, (deadline - monotonicNs()) / 1'000'000)));
      if (!f) return std::nullopt;
      if (f->frame().format != info_.format || (!isCompressed(info_.format) &&
                                                 (f->frame().width != info_.width || f->frame().height != info_.height))) {
        log::warn("share '", name_, "': its publisher restarted with another layout; frame dropped");
        drops_.fetch_add(1, std::memory_order_relaxed);
        continue;
      }
      const std::uint64_t index = f->publishIndex();
      if (lastIndex_ != 0 && index > lastIndex_ + 1) drops_.fetch_add(index - lastIndex_ - 1, std::memory_order_relaxed);
      lastIndex_ = index;
      Frame frame = f->frame();
      frame.times.mark(Stage::kIngest, monotonicNs());
      if (frame.times.at(Stage::kCapture) == 0) frame.times.mark(Stage::kCapture, f->publishNs());
      frames_.fetch_add(1, std::memory_order_relaxed);
      const std::uint32_t id = leases_->hold(std::move(*f));
      return FrameLease(leases_, id, frame);
    } catch (const Error& e) {
      if (e.code() != Errc::kUnavailable && e.code() != Errc::kNotFound) throw;
      if (lastIndex_ != 0 || stalls_.load() == 0) {
        stalls_.fetch_add(1, std::memory_order_relaxed);
        log::warn("share '", name_, "': ", e.what(), "; waiting for it to come back");
      }
      lastIndex_ = 0;
      const std::int64_t now = monotonicNs();
      if (now >= deadline) return std::nullopt;
      std::this_thread::sleep_for(std::chrono::nanoseconds(std::min<std::int64_t>(deadline - now, kRetryNs)));
    }
  }
}

SourceCounters ShareSource::counters() const {
  SourceCounters c;
  c.frames = frames_.load(std::memory_order_relaxed);
  c.drops = drops_.load(std::memory_order_relaxed);
  c.stalls = stalls_.load(std::memory_order_relaxed);
  return c;
}

}  // namespace zerohop
