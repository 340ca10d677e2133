#pragma once
// One output file of H.264 access units (Annex B), and optionally Opus packets beside them, in
// fragmented MP4 or Matroska, through libavformat. Written so that a writer killed at any moment
// leaves a file that plays up to its last fragment (MP4: frag_keyframe+empty_moov+default_base_moof,
// a fragment at least every second; Matroska: a cluster at least every second), and every packet is
// flushed to the file as it is written.
// With sound the packets go through libavformat's interleaving queue (by timestamp across the two
// tracks): write each track's packets in time order, the two tracks roughly together.
// Thread-safety: thread-bound. Ownership: owns the AVFormatContext and the file; the destructor
// writes the trailer and closes the file, logging (never throwing) a failure.

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

struct AVFormatContext;
struct AVStream;

namespace zerohop::record {

enum class Container { kMp4, kMatroska };

/// The container a file name asks for: .mp4/.m4v/.mov -> kMp4, .mkv -> kMatroska (case-insensitive).
/// Throws Error(kInvalidArgument) for anything else.
Container containerForPath(const std::string& path);

struct MediaFileParams {
  std::string path;
  Container container = Container::kMp4;
  std::uint32_t width = 0;
  std::uint32_t height = 0;
  /// SPS and PPS as Annex B NAL units (start codes included): the codec configuration the header needs.
  std::vector<std::uint8_t> parameterSets;
  /// CLOCK_REALTIME ms of the first frame: the file's creation_time (0 = none).
  std::int64_t creationWallClockMs = 0;
  /// > 0: an Opus track (48 kHz) of this many channels (1 or 2) beside the pictures (writeAudio()).
  std::uint32_t audioChannels = 0;
};

class MediaFile {
 public:
  /// Creates the file and writes the header. Throws Error(kIo) when the file cannot be created,
  /// Error(kDevice) for another libavformat failure (the call's name and FFmpeg's text).
  explicit MediaFile(const MediaFileParams& params);
  ~MediaFile();
  MediaFile(const MediaFile&) = delete;
  MediaFile& operator=(const MediaFile&) = delete;

  /// Appends one access unit; pts and duration in microseconds from the file's start (pts must grow).
  void write(const std::uint8_t* data, std::size_t size, std::int64_t ptsUs, std::int64_t durationUs,
             bool keyframe);
  /// Appends one Opus packet to the sound track (params.audioChannels > 0); times as write().
  void writeAudio(const std::uint8_t* data, std::size_t size, std::int64_t ptsUs, std::int64_t durationUs);
  /// Writes the trailer and closes the file (idempotent; the destructor calls it). Throws like write().
  void close();

  const std::string& path() const noexcept { return path_; }

 private:
  std::string path_;
  AVFormatContext* ctx_ = nullptr;
  AVStream* stream_ = nullptr;
  AVStream* audio_ = nullptr;  // null without sound
  bool headerWritten_ = false;

  void writePacket(AVStream* stream, const std::uint8_t* data, std::size_t size, std::int64_t ptsUs,
                   std::int64_t durationUs, bool keyframe);
};

}  // namespace zerohop::record
