#include "stream/rtp_appsrc_feed.hpp"

#include <gst/app/gstappsrc.h>

#include "stream/glib_handoff.hpp"
#include "stream/rtp_header_extensions.hpp"
#include "zerohop/clock.hpp"

namespace zerohop::stream {
namespace {

// Keeps the EncodedUnit alive as long as any GstBuffer wraps its bytes; released on whichever
// streaming thread drops the buffer last (ordered for TSan, see glib_handoff.hpp).
using UnitHolder = GlibHandoff<EncodedUnitPtr>;
void releaseUnit(gpointer holder) {
  auto* h = static_cast<UnitHolder*>(holder);
  h->get().reset();
  delete h;
}

// CLOCK_REALTIME ns at which `unit` was captured: its CLOCK_MONOTONIC capture time mapped to the wall
// clock now (as the sources compute EncodedUnit::wallClockMs, but to the nanosecond), else its wall
// clock in ms; 0 when it has neither.
std::int64_t captureWallClockNs(const EncodedUnit& unit) {
  if (unit.ptsNs > 0) return realtimeNs() - (monotonicNs() - unit.ptsNs);
  return unit.wallClockMs > 0 ? unit.wallClockMs * 1'000'000 : 0;
}

}  // namespace

GstBuffer* wrapEncodedUnit(const EncodedUnitPtr& unit, GstElement* pipeline, std::int64_t& lastPts) {
  const std::int64_t base = static_cast<std::int64_t>(gst_element_get_base_time(pipeline));
  const std::int64_t now = monotonicNs() - base;
  std::int64_t pts = unit->ptsNs > 0 ? unit->ptsNs - base : now;
  if (pts < 0 || pts > now) pts = now;  // captured before this pipeline started
  if (pts <= lastPts) pts = lastPts + 1;
  lastPts = pts;
  auto* holder = new UnitHolder(unit);
  GstBuffer* buffer =
      gst_buffer_new_wrapped_full(GST_MEMORY_FLAG_READONLY, const_cast<std::uint8_t*>(unit->bytes.data()),
                                  unit->bytes.size(), 0, unit->bytes.size(), holder, releaseUnit);
  GST_BUFFER_PTS(buffer) = static_cast<GstClockTime>(pts);
  GST_BUFFER_DTS(buffer) = static_cast<GstClockTime>(pts);
  if (!unit->keyframe) GST_BUFFER_FLAG_SET(buffer, GST_BUFFER_FLAG_DELTA_UNIT);
  // The capture wall clock travels to the payloader's abs-capture-time extension as a reference timestamp.
  if (const std::int64_t wall = captureWallClockNs(*unit); wall > 0) {
    gst_buffer_add_reference_timestamp_meta(buffer, captureWallClockCaps(), static_cast<GstClockTime>(wall),
                                            GST_CLOCK_TIME_NONE);
  }
  return buffer;
}

bool AppsrcFeed::push(const EncodedUnitPtr& unit) {
  if (!unit || unit->bytes.empty()) return false;
  std::lock_guard lock(mutex_);
  if (waitingForKeyframe_ && !unit->keyframe) return false;
  if (gst_app_src_get_current_level_buffers(GST_APP_SRC(appsrc_)) >= maxQueued_) {
    waitingForKeyframe_ = true;
    return true;
  }
  waitingForKeyframe_ = false;
  // takes the buffer; fails only when flushing
  gst_app_src_push_buffer(GST_APP_SRC(appsrc_), wrapEncodedUnit(unit, pipeline_, lastPts_));
  return false;
}

void AppsrcFeed::waitForKeyframe() {
  std::lock_guard lock(mutex_);
  waitingForKeyframe_ = true;
}

}  // namespace zerohop::stream
