// The streaming half of EmulatedFile: the producer thread that plays the camera and the driver's
// interrupt handler (fills the oldest queued buffer at each frame tick, injects the planned faults).
#include <linux/videodev2.h>

#include <algorithm>
#include <chrono>
#include <cstring>

#include "camemu/emulated_file.hpp"
#include "camemu/frame_synth.hpp"
#include "zerohop/clock.hpp"

namespace zerohop::camemu {

bool EmulatedFile::sleepUntil(std::int64_t ns) {
  std::unique_lock lock(mutex_);
  const std::chrono::steady_clock::time_point deadline{std::chrono::nanoseconds(ns)};
  return !wake_.wait_until(lock, deadline, [this] { return stop_; });
}

void EmulatedFile::produce() {
  const FaultPlan& faults = camera_.config().faults;
  std::uint64_t sequence = 0;
  std::int64_t tick = monotonicNs();
  for (;;) {
    if (!sleepUntil(tick)) return;
    const std::uint64_t n = sequence + 1;  // faults count frames from 1
    // At or past the planned frame: ticks a late producer skipped (below) must not skip a fault too (a
    // loaded box under ASan went from frame 8 to 12, and the unplug at 10 never came).
    if (faults.unplugAt != 0 && n >= faults.unplugAt && camera_.unplugOnce()) {
      camera_.trace("fault: unplugged before frame %llu", static_cast<unsigned long long>(n));
      signal(1);  // wake a blocked poll/DQBUF; they now see ENODEV / POLLERR|POLLHUP
      return;
    }
    if (faults.stallAt != 0 && n >= faults.stallAt && !stalled_) {
      stalled_ = true;
      camera_.trace("fault: stall of %u ms", faults.stallMs);
      if (!sleepUntil(monotonicNs() + std::int64_t{faults.stallMs} * 1'000'000)) return;
      tick = monotonicNs();
    }
    if (faults.slowEvery && n % faults.slowEvery == 0) {
      if (!sleepUntil(tick + std::int64_t{faults.slowMs} * 1'000'000)) return;
    }
    deliver(sequence, tick);
    ++sequence;
    const std::int64_t period = 1'000'000'000 / std::max<std::uint32_t>(1, camera_.rate());
    tick += period;
    // A camera does not wait for a late reader: ticks already past are frames never captured.
    const std::int64_t now = monotonicNs();
    if (now > tick + period) {
      const auto missed = static_cast<std::uint64_t>((now - tick) / period);
      sequence += missed;
      tick += static_cast<std::int64_t>(missed) * period;
    }
  }
}

void EmulatedFile::deliver(std::uint64_t sequence, std::int64_t tickNs) {
  const FaultPlan& faults = camera_.config().faults;
  const std::uint64_t n = sequence + 1;
  if (faults.dropEvery && n % faults.dropEvery == 0) return;  // lost on the wire: a sequence gap
  std::uint32_t index;
  std::uint8_t* dst;
  std::size_t capacity;
  {
    std::lock_guard lock(mutex_);
    if (queued_.empty()) return;  // no buffer: the frame is lost, as in uvcvideo
    index = queued_.front();
    queued_.pop_front();
    Buffer& b = buffers_[index];
    dst = memory_ == V4L2_MEMORY_MMAP ? b.map : reinterpret_cast<std::uint8_t*>(b.userptr);
    capacity = b.length;
  }
  const std::int64_t wallMs = (realtimeNs() - (monotonicNs() - tickNs)) / 1'000'000;
  if (camera_.takeKeyframeRequest()) synth_->forceKeyframe();
  std::size_t used = synth_->render(sequence, wallMs, dst, capacity);
  std::uint32_t flags = used == 0 ? V4L2_BUF_FLAG_ERROR : 0;
  if (synth_->wire().format == PixelFormat::kH264)
    flags |= synth_->keyframe() ? V4L2_BUF_FLAG_KEYFRAME : V4L2_BUF_FLAG_PFRAME;
  const bool jpeg = synth_->wire().format == PixelFormat::kMJPEG;
  if (faults.errorEvery && n % faults.errorEvery == 0) flags |= V4L2_BUF_FLAG_ERROR;
  if (faults.emptyEvery && n % faults.emptyEvery == 0) used = 0;
  if (jpeg && used > 4 && faults.corruptEvery && n % faults.corruptEvery == 0) {
    std::memset(dst + used - 2, 0, 2);  // the EOI marker is gone
  }
  if (jpeg && faults.truncateEvery && n % faults.truncateEvery == 0) used /= 3;
  std::lock_guard lock(mutex_);
  Buffer& b = buffers_[index];
  b.state = BufState::kDone;
  b.bytesUsed = static_cast<std::uint32_t>(used);
  b.flags = flags;
  b.sequence = static_cast<std::uint32_t>(sequence);
  b.timestampNs = tickNs;
  done_.push_back(index);
  signal(1);
}

}  // namespace zerohop::camemu
