#include "pattern_camera.hpp"

#include <cmath>
#include <thread>

#include "core/av_marker.hpp"
#include "core/av_marker_picture.hpp"
#include "zerohop/clock.hpp"
#include "zerohop/error.hpp"

namespace zerohop {
namespace {
PixelFormat chooseFormat(const SourceSpec& spec) {
  return spec.format == PixelFormat::kUnknown ? PixelFormat::kYUYV : spec.format;
}
}  // namespace

PatternCamera::PatternCamera(const SourceSpec& spec, const SourceOptions& options)
    : pool_(computeLayout(chooseFormat(spec), spec.width, spec.height, 64), std::max(2u, options.bufferCount),
            options.allocatorFactory ? options.allocatorFactory() : makeHostAllocator()),
      pattern_(chooseFormat(spec), spec.width, spec.height),
      periodNs_(static_cast<std::int64_t>(std::llround(1e9 / spec.fps))) {
  info_.format = chooseFormat(spec);
  info_.width = spec.width;
  info_.height = spec.height;
  info_.fps = spec.fps;
  info_.memory = pool_.memoryKind();
  info_.description = "test pattern " + std::to_string(spec.width) + "x" + std::to_string(spec.height) + "@" +
                      std::to_string(static_cast<int>(spec.fps)) + " " + std::string(formatName(info_.format));
}

std::optional<FrameLease> PatternCamera::next(std::chrono::milliseconds timeout) {
  const std::int64_t now = monotonicNs();
  if (startNs_ == 0) startNs_ = now;
  std::int64_t deadline = startNs_ + static_cast<std::int64_t>(index_) * periodNs_;
  // Too late for one or more frames: a camera does not wait, those frames are gone.
  if (now - deadline > periodNs_) {
    const auto missed = static_cast<std::uint64_t>((now - deadline) / periodNs_);
    index_ += missed;
    drops_ += missed;
    deadline = startNs_ + static_cast<std::int64_t>(index_) * periodNs_;
  }
  if (deadline - now > std::chrono::duration_cast<std::chrono::nanoseconds>(timeout).count()) {
    std::this_thread::sleep_for(timeout);
    return std::nullopt;
  }
  if (deadline > now) std::this_thread::sleep_for(std::chrono::nanoseconds(deadline - now));
  const std::int64_t wallMs = (realtimeNs() - (monotonicNs() - deadline)) / 1'000'000;

  auto lease = pool_.tryAcquire();
  const std::uint64_t seq = index_++;
  if (!lease) {  // every buffer is still downstream: drop this frame, never block
    ++drops_;
    return std::nullopt;
  }
  Frame& f = lease->frame();
  f.sequence = seq;
  f.wallClockMs = wallMs;
  f.keyframe = true;
  f.times = StageTimes{};
  f.times.mark(Stage::kCapture, deadline);
  pattern_.render(f, seq, Timecode{static_cast<std::uint64_t>(wallMs), static_cast<std::uint32_t>(seq)});
  // The A/V marker: white in the frame exposed over a marker instant (the instants the test tone clicks
  // at), black otherwise. The frame was exposed over the period that ends at its capture time.
  drawAvMarker(f, avMarkerIn(deadline - periodNs_, deadline));
  f.times.mark(Stage::kIngest, monotonicNs());
  ++frames_;
  return lease;
}

SourceCounters PatternCamera::counters() const {
  SourceCounters c;
  c.frames = frames_.load();
  c.drops = drops_.load();
  return c;
}

}  // namespace zerohop
