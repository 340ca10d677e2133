#include "recorder.hpp"

#include <opus/opus.h>

#include <cstdio>

#include "core/opus_toc.hpp"
#include "encode/annexb.hpp"
#include "zerohop/error.hpp"
#include "zerohop/log.hpp"

namespace zerohop::record {
namespace {

// A unit's duration before the next one arrives: the previous interval (30 fps until there is one).
constexpr std::int64_t kFirstDurationUs = 33333;
// Sound further than this ahead of the newest picture is written anyway: the picture has stalled.
constexpr std::int64_t kAudioAheadNs = 1'000'000'000;
// With no file open, the sound kept for the next one (which starts at a keyframe within it).
constexpr std::int64_t kAudioKeptNs = 2'000'000'000;

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

std::uint32_t opusPacketSamples(const std::uint8_t* data, std::size_t size) {
  if (!data || size == 0 || size > 0x7fffffff) return 0;
  // libopus reads the TOC (and a code 3 packet's frame count); it refuses packets over 120 ms.
  const int samples = opus_packet_get_nb_samples(data, static_cast<opus_int32>(size), 48000);
  return samples > 0 ? static_cast<std::uint32_t>(samples) : 0;
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
  MediaFileParams p;
  const bool rotating = options_.segmentSeconds > 0 || options_.segmentBytes > 0;
  p.path = rotating ? segmentPath(options_.path, nextIndex_) : options_.path;
  p.container = container_;
  p.width = unit.width;
  p.height = unit.height;
  p.parameterSets = parameterSets_;
  p.creationWallClockMs = unit.wallClockMs;
  if (options_.sound) p.audioChannels = audioChannels_ != 0 ? audioChannels_ : 1;
  file_ = std::make_unique<MediaFile>(p);
  ++nextIndex_;
  ++stats_.files;
  stats_.currentPath = p.path;
  fileStartNs_ = unit.captureNs;
  lastPtsUs_ = -1;
  lastDurationUs_ = 0;
  lastAudioPtsUs_ = -1;
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
    flushAudio(unit.captureNs);  // the sound up to the next file's first picture ends this one
    stats_.recordedNs += (lastPtsUs_ + lastDurationUs_) * 1000;
    file_.reset();  // trailer written, file closed
  }
  if (!file_) openFile(unit);
  flushAudio(unit.captureNs);  // before the picture, in time order (a new file drops what precedes it)
  lastVideoNs_ = unit.captureNs;

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

void Recorder::writeAudio(const RecordAudio& packet) {
  if (!options_.sound) return;
  const std::uint32_t samples = opusPacketSamples(packet.data, packet.size);
  if (samples == 0 || (!audio_.empty() && packet.captureNs < audio_.back().captureNs)) {
    ++stats_.audioDropped;  // unreadable, or before the packet already queued
    return;
  }
  if (audioChannels_ == 0)
    audioChannels_ = static_cast<std::uint32_t>(opusPacketChannels(packet.data, packet.size));
  audio_.push_back({std::vector<std::uint8_t>(packet.data, packet.data + packet.size), packet.captureNs, samples});
  if (file_) {
    flushAudio(packet.captureNs - kAudioAheadNs);
  } else {
    while (audio_.front().captureNs < packet.captureNs - kAudioKeptNs) {
      audio_.pop_front();
      ++stats_.audioDropped;
    }
  }
}

void Recorder::flushAudio(std::int64_t beforeNs) {
  while (!audio_.empty() && audio_.front().captureNs < beforeNs) {
    const QueuedAudio a = std::move(audio_.front());
    audio_.pop_front();
    if (!file_ || a.captureNs < fileStartNs_) {
      ++stats_.audioDropped;  // before the file's first picture
      continue;
    }
    std::int64_t ptsUs = (a.captureNs - fileStartNs_) / 1000;
    if (ptsUs <= lastAudioPtsUs_) ptsUs = lastAudioPtsUs_ + 1;
    file_->writeAudio(a.bytes.data(), a.bytes.size(), ptsUs, std::int64_t{a.samples} * 1'000'000 / 48'000);
    lastAudioPtsUs_ = ptsUs;
    fileBytes_ += a.bytes.size();
    ++stats_.audioPackets;
    stats_.audioBytes += a.bytes.size();
  }
}

void Recorder::finish() {
  if (!file_) return;
  flushAudio(fileStartNs_ + (lastPtsUs_ + lastDurationUs_) * 1000);  // the sound the pictures span
  stats_.recordedNs += (lastPtsUs_ + lastDurationUs_) * 1000;
  auto file = std::move(file_);
  file->close();
  waitingForKeyframe_ = true;
}

}  // namespace zerohop::record
