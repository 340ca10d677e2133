#pragma once
// The cameras `serve` (and `probe`) is given: `--camera NAME=SOURCE` arguments and `[[camera]]`
// tables in the --config TOML file, turned into CameraConfigs. Errors are
// zerohop::Error(kInvalidArgument) (exit code 2) naming the camera, and for a table its file and line.
// Thread-safety: reentrant.

#include <map>
#include <string>
#include <vector>

#include "zerohop/camera_server.hpp"

namespace zerohop::cli {

/// The keys a [[camera]] table may have.
inline const std::vector<std::string> kCameraTableKeys = {
    "name",       "source", "bitrate", "keyint",         "encoder",        "preset",
    "threads",    "gpu",    "share",   "renditions",     "audio",          "whip",
    "whip_token", "janus",  "record",  "record_segment", "audio_frame_ms", "whip_simulcast"};

/// One [[camera]] table as written: its keys' values (strings unquoted, numbers as written) and lines.
struct CameraTable {
  int line = 0;  ///< of its [[camera]] header
  std::map<std::string, std::string> values;
  std::map<std::string, int> lines;
};

/// Every [[camera]] table of the TOML file at `path`, in order. Throws naming the file, the line and
/// the camera for an unknown key, a key given twice, a value that is not a TOML string or integer.
std::vector<CameraTable> readCameraTables(const std::string& path);

/// What a camera takes from serve's own options unless its table says otherwise.
struct CameraDefaults {
  EncoderConfig encoder;
  std::string gpu = "auto";
  std::string renditions = "auto";
  std::uint32_t audioFrameMs = CameraConfig{}.audioFrameMs;
};

/// `c` takes `defaults` (before its table's own keys).
void applyDefaults(CameraConfig& c, const CameraDefaults& defaults);

/// `NAME=SOURCE` (--camera). Throws naming the argument when it has no '=', a bad NAME or SOURCE.
CameraConfig parseCameraArgument(const std::string& argument, const CameraDefaults& defaults);

/// A [[camera]] table from `path`. Throws naming the file, line and camera when name or source is
/// missing or a value is out of range.
CameraConfig cameraFromTable(const CameraTable& table, const CameraDefaults& defaults,
                             const std::string& path);

}  // namespace zerohop::cli
