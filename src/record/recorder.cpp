#include "recorder.hpp"

#include <cstdio>

#include "encode/annexb.hpp"
#include "zerohop/error.hpp"
#include "zerohop/log.hpp"

namespace zerohop::record {
namespace {

// A unit's duration before the next one arrives: the previous interval (30 fps until there is one).
constexpr std::int64_t kFirstDurationUs = 33333;

}  // namespace

std::string segmentPath(const std::string& path, std::uint32_t index) {
  const auto slash = path.find_last_of('/');
  auto dot = path.find_last_of('.');
  if (dot == std::string::npos || (slash != std::string::npos && dot < slash)) dot = path.size();
  char num[16];
  std::snprintf(num, sizeof num, "-%04u", index);
  return path.substr(0, dot) + num + path.substr(dot);
}

std::vector<std::uint8_t> parameterSetsOf(const std::uint8_t* data, std::size_t size) {
  std::vector<std::uint8_t> out;
  for (const auto& nal : encode::nalUnits(data, size)) {
    if (nal.type == encode::kNalSps || nal.type == encode::kNalPps) {
      out.insert(out.end(), data + nal.offset, data + nal.offset + nal.size);
    }
  }
  return out;
}

Recorder::Recorder(RecorderOptions options)
    : options_(std::move(options)), container_(containerForPath(options_.path)) {
  if (options_.segmentSeconds < 0)
    throw Error(Errc::kInvalidArgument, "the segment duration must not be negative");
}

Recorder::~Recorder() {
  try {
    finish();
  } catch (const std::exception& e) {
    log::warn("recorder: ", e.what());
  }
}

void Recorder::discontinuity() noexcept {
  if (!waitingForKeyframe_) ++stats_.discontinuities;
  waitingForKeyframe_ = true;
}

bool Recorder::segmentFull(const RecordUnit& next) const noexcept {
  // Duration: the file holds [start, next) once `next` starts the new one; within half a frame
  // counts (30 fps capture times put the 30th frame 10 ns short of a second).
  const std::int64_t spanUs = (next.captureNs - fileStartNs_) / 1000 + lastDurationUs_ / 2;
  if (options_.segmentSeconds > 0 && spanUs >= static_cast<std::int64_t>(options_.segmentSeconds * 1e6))
    return true;
  return options_.segmentBytes > 0 && fileBytes_ >= options_.segmentBytes;
}

void Recorder::openFile(const RecordUnit& unit) {
  H264FileParams p;
  const bool rotating = options_.segmentSeconds > 0 || options_.segmentBytes > 0;
  p.path = rotating ? segmentPath(options_.path, nextIndex_) : options_.path;
  p.container = container_;
  p.width = unit.width;
  p.height = unit.height;
  p.parameterSets = parameterSets_;
  p.creationWallClockMs = unit.wallClockMs;
  file_ = std::make_unique<H264File>(p);
  ++nextIndex_;
  ++stats_.files;
  stats_.currentPath = p.path;
  fileStartNs_ = unit.captureNs;
  lastPtsUs_ = -1;
  lastDurationUs_ = 0;
  fileBytes_ = 0;
  log::info("recording to '", p.path, "'");
}

void Recorder::write(const RecordUnit& unit) {
  if (!unit.data || unit.size == 0) return;
  if (auto ps = parameterSetsOf(unit.data, unit.size); !ps.empty()) parameterSets_ = std::move(ps);
  if (waitingForKeyframe_) {
    // A keyframe with no SPS/PPS seen yet cannot start a file a player can open.
    if (!unit.keyframe || parameterSets_.empty()) {
      ++stats_.waitedForKeyframe;
      return;
    }
    waitingForKeyframe_ = false;
  }
  if (file_ && unit.keyframe && segmentFull(unit)) {
    stats_.recordedNs += (lastPtsUs_ + lastDurationUs_) * 1000;
    file_.reset();  // trailer written, file closed
  }
  if (!file_) openFile(unit);

  std::int64_t ptsUs = (unit.captureNs - fileStartNs_) / 1000;
  if (ptsUs <= lastPtsUs_) ptsUs = lastPtsUs_ + 1;  // capture times that repeat or step back
  if (lastPtsUs_ >= 0) lastDurationUs_ = ptsUs - lastPtsUs_;
  const std::int64_t durationUs = lastPtsUs_ >= 0 ? lastDurationUs_ : kFirstDurationUs;
  file_->write(unit.data, unit.size, ptsUs, durationUs, unit.keyframe);
  if (lastPtsUs_ < 0) lastDurationUs_ = kFirstDurationUs;
  lastPtsUs_ = ptsUs;
  fileBytes_ += unit.size;
  ++stats_.units;
  stats_.bytes += unit.size;
  if (unit.keyframe) ++stats_.keyframes;
}

RecorderStats Recorder::stats() const {
  RecorderStats s = stats_;
  if (file_) s.recordedNs += (lastPtsUs_ + lastDurationUs_) * 1000;
  s.frameIntervalNs = lastDurationUs_ * 1000;
  return s;
}

void Recorder::finish() {
  if (!file_) return;
  stats_.recordedNs += (lastPtsUs_ + lastDurationUs_) * 1000;
  auto file = std::move(file_);
  file->close();
  waitingForKeyframe_ = true;
}

}  // namespace zerohop::record
