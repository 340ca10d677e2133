#pragma once
// Feeding encoded units into one sender's appsrc (WHEP/WHIP sessions, plain RTP), with the policy every
// sender of the stream stage shares:
//   - the bytes are wrapped, not copied (the GstBuffer holds a shared_ptr to the EncodedUnit), and
//     stamped in the pipeline's running time so the RTP timestamps follow the capture clock;
//   - nothing until a keyframe (a receiver cannot start on a delta unit);
//   - overflow: more than `maxQueued` units waiting in the appsrc (the sender is stuck) drops units
//     until the next keyframe, and the caller is told to ask for one.
// Thread-safety: AppsrcFeed is thread-safe; wrapEncodedUnit is reentrant (`lastPts` is the caller's).

#include <gst/gst.h>

#include <cstdint>
#include <mutex>

#include "zerohop/encoded_unit.hpp"

namespace zerohop::stream {

/// `unit->ptsNs` (CLOCK_MONOTONIC, the clock of pipelines that use the system clock) minus the
/// pipeline's base time; a unit captured before the pipeline started is stamped "now"; stamps are
/// kept strictly increasing through `lastPts` (-1 initially). Delta units are flagged DELTA_UNIT.
/// The unit's capture wall clock (CLOCK_REALTIME ns) rides along as a GstReferenceTimestampMeta with
/// captureWallClockCaps(), for the abs-capture-time extension (rtp_header_extensions.hpp).
/// Returns a new buffer (the caller owns it, e.g. hands it to gst_app_src_push_buffer).
GstBuffer* wrapEncodedUnit(const EncodedUnitPtr& unit, GstElement* pipeline, std::int64_t& lastPts);

class AppsrcFeed {
 public:
  /// Borrows `appsrc` and `pipeline` (its owner keeps both alive longer than this feed).
  AppsrcFeed(GstElement* appsrc, GstElement* pipeline, unsigned maxQueued)
      : appsrc_(appsrc), pipeline_(pipeline), maxQueued_(maxQueued) {}

  /// Non-blocking. True when the unit was dropped because the appsrc is full: ask for a keyframe.
  [[nodiscard]] bool push(const EncodedUnitPtr& unit);
  /// Drops everything until the next keyframe (e.g. the receiver just connected).
  void waitForKeyframe();

 private:
  GstElement* const appsrc_;
  GstElement* const pipeline_;
  const unsigned maxQueued_;
  std::mutex mutex_;
  bool waitingForKeyframe_ = true;
  std::int64_t lastPts_ = -1;
};

}  // namespace zerohop::stream
