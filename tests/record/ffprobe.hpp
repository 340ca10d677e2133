#pragma once
// What ffprobe says about a recorded file: frames it decodes, duration, and the first frame's type.
// Thread-safety: reentrant (runs ffprobe as a child process).

#include <optional>
#include <string>

namespace zerohop::testing {

struct ProbeResult {
  bool ok = false;             ///< ffprobe opened the file and found a video stream
  long frames = 0;             ///< nb_read_frames (every frame decoded)
  double durationSeconds = 0;  ///< the container's duration, else the stream's
  bool firstIsKeyframe = false;
  std::string codec;
  double frameRate = 0;  ///< avg_frame_rate
  std::string error;     ///< ffprobe's stderr when !ok
};

/// Runs ffprobe on `path`; ok=false (with ffprobe's words) when it cannot read it.
ProbeResult probeFile(const std::string& path);

/// What ffprobe says about a file's first sound track.
struct AudioProbeResult {
  bool ok = false;  ///< ffprobe found a sound track
  std::string codec;
  long packets = 0;  ///< nb_read_packets
  int channels = 0;
  double startSeconds = 0;
  std::string error;
};
AudioProbeResult probeAudio(const std::string& path);
/// True when ffprobe is on PATH.
bool haveFfprobe();

}  // namespace zerohop::testing
