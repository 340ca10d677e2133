#include "record_sink.hpp"

#include <utility>

#include "zerohop/error.hpp"
#include "zerohop/log.hpp"

namespace zerohop {
namespace {

// Units the writer may fall behind by before the oldest are dropped: ~8 s of 30 fps pictures with their
// sound (a unit is shared with the other sinks, so the queue holds pointers, not copies). The writer takes
// the queue whole, so a stalled write holds at most twice this many.
constexpr std::size_t kQueueUnits = 400;

}  // namespace

// The recorder is made here (a bad file name fails now, before the camera opens) and used only by the
// writer thread from then on.
RecordSink::RecordSink(record::RecorderOptions options)
    : options_(std::move(options)), recorder_(std::make_unique<record::Recorder>(options_)) {
  log::info("recording to ", options_.path,
            options_.segmentSeconds > 0
                ? " (a new file every " + std::to_string(static_cast<long>(options_.segmentSeconds)) + " s)"
                : std::string{},
            options_.sound ? ", with the sound" : "");
  writer_ = std::thread([this] { run(); });
}

RecordSink::~RecordSink() {
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
  }
  wake_.notify_all();
  writer_.join();
}

bool RecordSink::wants(TrackKey track) const {
  return track == TrackKey{Codec::kH264, 0} || (options_.sound && track == TrackKey{Codec::kOpus, 0});
}

void RecordSink::attach(const SinkSetup& setup) {
  {
    std::lock_guard lock(requesterMutex_);
    requestKeyframe_ = setup.requestKeyframe;
  }
  {
    // A pipeline after the first (a camera opened again): its units follow a gap, from its own
    // encoder, so the file goes on at its first keyframe.
    std::lock_guard lock(mutex_);
    if (attaches_++ > 0) lost_ = true;
  }
  requestKeyframe();
}

void RecordSink::detach() {
  std::lock_guard lock(requesterMutex_);
  requestKeyframe_ = nullptr;
}

void RecordSink::requestKeyframe() {
  std::lock_guard lock(requesterMutex_);
  if (requestKeyframe_) requestKeyframe_();  // it only sets a flag
}

void RecordSink::deliver(const EncodedUnitPtr& unit) {
  if (!unit || !wants(unit->track())) return;
  bool firstDrop = false;
  {
    std::lock_guard lock(mutex_);
    if (stopping_ || !error_.empty()) return;
    if (queue_.size() >= kQueueUnits) {
      queue_.pop_front();
      ++dropped_;
      firstDrop = !lost_;
      lost_ = true;
    }
    queue_.push_back(unit);
  }
  wake_.notify_one();
  if (firstDrop) {
    log::warn("recording to ", options_.path, ": the disk fell ", kQueueUnits,
              " units behind; dropping the oldest, the file goes on at the next keyframe");
    requestKeyframe();
  }
}

void RecordSink::write(record::Recorder& recorder, const EncodedUnit& unit) {
  if (unit.codec == Codec::kOpus) {
    recorder.writeAudio({unit.bytes.data(), unit.bytes.size(), unit.ptsNs});
    return;
  }
  record::RecordUnit r;
  r.data = unit.bytes.data();
  r.size = unit.bytes.size();
  r.keyframe = unit.keyframe;
  r.captureNs = unit.ptsNs;
  r.wallClockMs = unit.wallClockMs;
  r.width = unit.width;
  r.height = unit.height;
  recorder.write(r);
}

void RecordSink::run() {
  record::Recorder& recorder = *recorder_;
  std::deque<EncodedUnitPtr> batch;
  for (;;) {
    bool lost = false;
    bool stopping = false;
    {
      std::unique_lock lock(mutex_);
      wake_.wait(lock, [this] { return stopping_ || !queue_.empty(); });
      batch.swap(queue_);
      lost = std::exchange(lost_, false);
      stopping = stopping_;
    }
    try {
      if (lost) recorder.discontinuity();
      for (const auto& unit : batch) write(recorder, *unit);
      if (stopping) recorder.finish();  // the trailer: the file plays whole
    } catch (const Error& e) {
      log::error("recording to ", options_.path, " ended: ", e.what());
      std::lock_guard lock(mutex_);
      error_ = e.what();
      queue_.clear();
    }
    batch.clear();
    {
      std::lock_guard lock(mutex_);
      written_ = recorder.stats();
      if (stopping || !error_.empty()) return;
    }
  }
}

RecordingStatus RecordSink::stats() const {
  std::lock_guard lock(mutex_);
  RecordingStatus s;
  s.path = options_.path;
  s.currentPath = written_.currentPath;
  s.units = written_.units;
  s.audioPackets = written_.audioPackets;
  s.bytes = written_.bytes + written_.audioBytes;
  s.files = written_.files;
  s.dropped = dropped_;
  s.recordedSeconds = static_cast<double>(written_.recordedNs) / 1e9;
  s.error = error_;
  return s;
}

}  // namespace zerohop
