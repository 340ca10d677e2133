#pragma once
// A camera's recording as a UnitSink (`serve --record FILE`, a [[camera]] table's `record`): the main
// H.264 encode (and the sound, when the stream has it) written by a thread of its own through a
// record::Recorder: fragmented MP4 or Matroska from the first keyframe, capture-time timestamps, a new
// file at the first keyframe past each segment's duration.
// deliver() never blocks the encode or the sound: it queues the unit. When the disk falls behind by
// more than the queue holds, the oldest units are dropped and the file waits for the next keyframe
// (counted in stats(), logged once per burst); the sink asks the pipeline for that keyframe. A write
// that fails (disk full, file removed) ends the recording with its error in stats() and the log; the
// camera and its other outputs go on.
// Thread-safety: deliver() from any thread; stats() from any.
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>

#include "record/recorder.hpp"
#include "zerohop/pipeline.hpp"
#include "zerohop/sinks.hpp"

namespace zerohop {

class RecordSink final : public UnitSink {
 public:
  /// Checks the file name (FILE.mp4 or FILE.mkv: Error kInvalidArgument otherwise) and starts the
  /// writer thread; opens nothing until the first keyframe. `options.sound`: the files have an Opus track.
  explicit RecordSink(record::RecorderOptions options);
  /// Writes what is queued and closes the file (its trailer written): a recording stopped with serve is
  /// whole.
  ~RecordSink() override;
  RecordSink(const RecordSink&) = delete;
  RecordSink& operator=(const RecordSink&) = delete;

  void deliver(const EncodedUnitPtr& unit) override;
  /// The main H.264 encode (rung 0); Opus when the recording has sound.
  bool wants(TrackKey track) const override;
  /// Keeps the setup's keyframe requester: asked once now (the file starts at the next keyframe) and
  /// again after units were dropped. May be attached again after detach() (a camera's pipeline opened
  /// again: CameraRunner keeps one RecordSink per camera): the same file goes on from the new pipeline's
  /// first keyframe, with the gap in time.
  void attach(const SinkSetup& setup) override;
  void detach() override;
  std::string describe() const override { return "recording to " + options_.path; }

  RecordingStatus stats() const;

 private:
  void run();
  void write(record::Recorder& recorder, const EncodedUnit& unit);
  void requestKeyframe();

  const record::RecorderOptions options_;
  mutable std::mutex mutex_;
  std::condition_variable wake_;
  std::deque<EncodedUnitPtr> queue_;  // mutex_
  bool lost_ = false;                 // mutex_: units were dropped since the writer last took the queue
  bool stopping_ = false;             // mutex_
  int attaches_ = 0;                  // mutex_: pipelines that fed it (a camera reopened: more than one)
  std::uint64_t dropped_ = 0;         // mutex_
  record::RecorderStats written_;     // mutex_: the writer's copy after each unit
  std::string error_;                 // mutex_
  std::mutex requesterMutex_;
  std::function<void()> requestKeyframe_;       // requesterMutex_
  std::unique_ptr<record::Recorder> recorder_;  // the writer thread's once it starts
  std::thread writer_;                          // last: started once every member exists
};

}  // namespace zerohop
