#pragma once
// Settings of the emulated cameras, passed from the zerohop-camemu launcher to the LD_PRELOAD shim
// through environment variables (so they survive exec and reach every process of the client).
// One camera: the ZEROHOP_CAMEMU_* variables. Several: ZEROHOP_CAMEMU_CAMERAS, one group of
// settings per camera ("format=mjpeg,size=1280x720;format=h264"), each starting from the one-camera
// variables with device /dev/video<index>.
// Thread-safety: value types; parseConfig/configFromEnvironment are reentrant.

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "zerohop/pixel_format.hpp"

namespace zerohop::camemu {

/// Faults the emulator injects, counted in frames of the stream (sequence numbers). 0 = off.
struct FaultPlan {
  std::uint32_t errorEvery = 0;     ///< every Nth frame is delivered with V4L2_BUF_FLAG_ERROR
  std::uint32_t corruptEvery = 0;   ///< every Nth MJPEG frame has its EOI marker garbled
  std::uint32_t truncateEvery = 0;  ///< every Nth MJPEG frame is cut to a third of its size
  std::uint32_t emptyEvery = 0;     ///< every Nth frame has bytesused = 0
  std::uint32_t dropEvery = 0;      ///< every Nth frame is never delivered (a sequence gap)
  std::uint32_t slowEvery = 0;      ///< every Nth frame is late by slowMs
  std::uint32_t slowMs = 0;
  std::uint64_t stallAt = 0;  ///< before frame N (N >= 1), no frames for stallMs
  std::uint32_t stallMs = 0;
  std::uint64_t unplugAt = 0;  ///< before frame N (N >= 1) the camera disappears (ENODEV)
  std::int64_t replugMs = -1;  ///< ... and reappears after this many ms (-1: never)
};

struct EmuConfig {
  std::string devicePath = "/dev/video0";
  std::uint32_t index = 0;  ///< the camera's place among the process's cameras (bus_info, card)
  PixelFormat format = PixelFormat::kYUYV;  ///< the format the device starts in
  std::uint32_t width = 1280;
  std::uint32_t height = 720;
  std::uint32_t fps = 30;
  bool expbuf = true;  ///< VIDIOC_EXPBUF answers with a memfd (not a DMA-BUF: see docs/camemu.md)
  /// A camera launched as H.264 offers V4L2_CID_MPEG_VIDEO_FORCE_KEY_FRAME (false: no controls at all).
  bool keyframeControl = true;
  /// H.264: SPS/PPS before every IDR (false: only before the first one, as some cameras do).
  bool h264HeadersEveryIdr = true;
  bool verbose = false;
  FaultPlan faults;
};

// Environment variable names (the launcher sets them; the shim reads them).
inline constexpr const char* kEnvDevice = "ZEROHOP_CAMEMU_DEVICE";
inline constexpr const char* kEnvFormat = "ZEROHOP_CAMEMU_FORMAT";
inline constexpr const char* kEnvSize = "ZEROHOP_CAMEMU_SIZE";
inline constexpr const char* kEnvFps = "ZEROHOP_CAMEMU_FPS";
inline constexpr const char* kEnvFaults = "ZEROHOP_CAMEMU_FAULTS";
inline constexpr const char* kEnvExpbuf = "ZEROHOP_CAMEMU_EXPBUF";
inline constexpr const char* kEnvVerbose = "ZEROHOP_CAMEMU_VERBOSE";
inline constexpr const char* kEnvKeyframeControl = "ZEROHOP_CAMEMU_KEYFRAME_CONTROL";
inline constexpr const char* kEnvH264Headers = "ZEROHOP_CAMEMU_H264_HEADERS";
inline constexpr const char* kEnvCameras = "ZEROHOP_CAMEMU_CAMERAS";
/// The most cameras one process emulates (zerohop's probe looks at /dev/video0..63).
inline constexpr std::size_t kMaxCameras = 64;

/// Applies one setting by name ("format", "size", "fps", "device", "expbuf", "keyframe-control" (on|off),
/// "h264-headers" (idr|once)) or one fault
/// ("error-every=N", "corrupt-every=N", "truncate-every=N", "empty-every=N", "drop-every=N",
/// "slow-every=N:MS", "stall-at=N:MS", "unplug-at=N[:REPLUG_MS]"). Throws Error(kInvalidArgument).
void applySetting(EmuConfig& config, std::string_view key, std::string_view value);
/// Parses a comma-separated list of settings and faults ("error-every=10,unplug-at=30:500",
/// "format=mjpeg,size=1280x720,fps=15"): applySetting for each name=value.
void applyFaults(EmuConfig& config, std::string_view list);
/// Every setting of `config` (device, format, size, fps, expbuf, keyframe-control, h264-headers, faults)
/// as the comma-separated list applyFaults reads back into the same configuration.
std::string settingsToString(const EmuConfig& config);
/// The cameras of `groups` (one applyFaults list each): camera i starts from `defaults` with device
/// /dev/video<i>, then its group applies. Throws Error(kInvalidArgument) naming the camera on a bad
/// setting, a device path given to two cameras, no group, or more than kMaxCameras.
std::vector<EmuConfig> camerasFromGroups(const EmuConfig& defaults, const std::vector<std::string>& groups);
/// Splits ZEROHOP_CAMEMU_CAMERAS's value at ';' (empty groups are cameras with the defaults).
std::vector<std::string> splitCameraGroups(std::string_view list);
/// The faults as the comma-separated list applyFaults reads.
std::string faultsToString(const FaultPlan& faults);
/// Reads the ZEROHOP_CAMEMU_* variables. Throws Error(kInvalidArgument) on a malformed value.
EmuConfig configFromEnvironment();
/// The process's cameras: camerasFromGroups(configFromEnvironment(), ZEROHOP_CAMEMU_CAMERAS's groups),
/// or the one camera of configFromEnvironment() when that variable is unset or empty.
std::vector<EmuConfig> camerasFromEnvironment();
/// True for the formats the emulator can produce in this build.
bool formatSupported(PixelFormat format) noexcept;

}  // namespace zerohop::camemu
