#pragma once
// Records H.264 access units (the NAME.h264 share of `zerohop serve --share NAME`) into files:
// starts at the first keyframe, stamps each unit with its capture time (relative to the file's first
// unit), and optionally rotates to a new file at the first keyframe past a duration or size.
// A discontinuity (units the reader missed, or one overwritten while read) waits for the next
// keyframe, so a file never holds a unit whose references are missing.
// With sound (RecorderOptions::sound: the NAME.opus share beside it), each file also has an Opus track
// on the same timeline: a packet is held until the picture has passed its capture instant, so the
// packets before a file's first keyframe are left out, those before a rotation's keyframe close the old
// file, and a stalled picture holds the sound back at most a second.
// Thread-safety: thread-bound. Ownership: owns the open file (MediaFile); destroying the Recorder
// closes it (trailer written).

#include <cstddef>
#include <cstdint>
#include <deque>
#include <memory>
#include <string>
#include <vector>

#include "record/media_file.hpp"

namespace zerohop::record {

struct RecorderOptions {
  /// FILE.mp4 or FILE.mkv. With rotation the files are FILE-0000.mp4, FILE-0001.mp4, ...
  std::string path;
  double segmentSeconds = 0;       ///< > 0: rotate at the first keyframe this long into a file
  std::uint64_t segmentBytes = 0;  ///< > 0: rotate at the first keyframe after this many bytes
  bool sound = false;              ///< every file gets an Opus track (writeAudio())
};

/// One access unit as the recorder sees it (the bytes are only read during write()).
struct RecordUnit {
  const std::uint8_t* data = nullptr;
  std::size_t size = 0;
  bool keyframe = false;
  std::int64_t captureNs = 0;    ///< CLOCK_MONOTONIC capture time: the timestamp source
  std::int64_t wallClockMs = 0;  ///< CLOCK_REALTIME at capture (a new file's creation_time)
  std::uint32_t width = 0;
  std::uint32_t height = 0;
};

/// One Opus packet as the recorder sees it (the bytes are copied by writeAudio()).
struct RecordAudio {
  const std::uint8_t* data = nullptr;
  std::size_t size = 0;
  std::int64_t captureNs = 0;  ///< CLOCK_MONOTONIC capture instant of its first sample (the pictures' clock)
};

struct RecorderStats {
  std::uint64_t units = 0;  ///< units written, all files
  std::uint64_t bytes = 0;  ///< payload bytes written, all files
  std::uint64_t keyframes = 0;
  std::uint64_t waitedForKeyframe = 0;  ///< units dropped before the first keyframe or after a discontinuity
  std::uint64_t discontinuities = 0;
  std::uint64_t audioPackets = 0;  ///< Opus packets written, all files
  std::uint64_t audioBytes = 0;
  std::uint64_t audioDropped = 0;  ///< before a file's first picture, unreadable, or out of order
  std::uint32_t files = 0;           ///< files opened so far
  std::int64_t recordedNs = 0;       ///< media time written: each file's capture-time span, summed
  std::int64_t frameIntervalNs = 0;  ///< the last interval between units (the newest unit's assumed duration)
  std::string currentPath;           ///< the file being written ("" before the first keyframe)
};

/// "dir/FILE.mp4", 3 -> "dir/FILE-0003.mp4" (the index before the extension, at least 4 digits).
std::string segmentPath(const std::string& path, std::uint32_t index);

/// Annex B SPS and PPS NAL units of `data` (start codes included), in order; empty if it has none.
std::vector<std::uint8_t> parameterSetsOf(const std::uint8_t* data, std::size_t size);

/// Sample frames (48 kHz) one Opus packet decodes to, from its TOC byte (RFC 6716, 3.1); 0 when the
/// packet is malformed (empty, a code 3 packet without its frame count, longer than 120 ms).
std::uint32_t opusPacketSamples(const std::uint8_t* data, std::size_t size);

class Recorder {
 public:
  /// Checks the file name (containerForPath); opens nothing until the first keyframe.
  explicit Recorder(RecorderOptions options);
  ~Recorder();
  Recorder(const Recorder&) = delete;
  Recorder& operator=(const Recorder&) = delete;

  /// Writes `unit` (or drops it while waiting for a keyframe). Throws Error from the file (kIo...).
  void write(const RecordUnit& unit);
  /// Queues one Opus packet (options.sound), written once the picture has passed it. Malformed packets
  /// are counted and dropped. Throws Error from the file (kIo...).
  void writeAudio(const RecordAudio& packet);
  /// Units were lost before the next write(): drop everything up to the next keyframe.
  void discontinuity() noexcept;
  /// Closes the current file (trailer written). Further writes open a new one at the next keyframe.
  void finish();

  /// Counters so far; recordedNs includes the file being written.
  RecorderStats stats() const;

 private:
  struct QueuedAudio {
    std::vector<std::uint8_t> bytes;
    std::int64_t captureNs = 0;
    std::uint32_t samples = 0;
  };

  void openFile(const RecordUnit& unit);
  bool segmentFull(const RecordUnit& next) const noexcept;
  /// Writes the queued packets captured before `beforeNs` into the open file (drops them without one).
  void flushAudio(std::int64_t beforeNs);

  RecorderOptions options_;
  Container container_;
  std::unique_ptr<MediaFile> file_;
  std::deque<QueuedAudio> audio_;  // captured after the newest picture written (at most ~1 s of it)
  std::uint32_t audioChannels_ = 0;  // from the first packet's TOC
  std::int64_t lastAudioPtsUs_ = -1;  // the newest Opus packet in the file
  std::vector<std::uint8_t> parameterSets_;  // latest SPS+PPS seen in the stream
  bool waitingForKeyframe_ = true;
  std::int64_t fileStartNs_ = 0;
  std::int64_t lastVideoNs_ = 0;  // capture time of the newest picture written
  std::int64_t lastPtsUs_ = -1;
  std::int64_t lastDurationUs_ = 0;
  std::uint64_t fileBytes_ = 0;
  std::uint32_t nextIndex_ = 0;
  RecorderStats stats_;
};

}  // namespace zerohop::record
