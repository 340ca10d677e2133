#pragma once
// Whether NVENC can encode on this machine, decided the way the encoder itself would find out:
// load libnvidia-encode.so.1, check the API version the driver offers, open an encode session on
// the CUDA device's primary context, ask for H.264, close. `zerohop probe`, `serve --encoder
// auto|nvenc` and makeEncoder() all use this one answer. No NVENC or CUDA types here (users build without those SDKs):
// both libraries are loaded at run time, so programs start without the NVIDIA driver.
// Thread-safety: probeNvenc() and describe() are reentrant.

#include <string>

#include "zerohop/export.h"

namespace zerohop {

/// What probeNvenc found. `available` = false is a normal answer, never an exception.
struct NvencAvailability {
  bool available = false;
  /// Why not, in words, one of:
  ///  "libnvidia-encode.so.1 not found: install the NVIDIA driver's encode library (e.g. libnvidia-encode-<ver>) (...)",
  ///  "no CUDA device (...)", "this GPU has no video encoder (A100/H100/H200): NV_ENC_ERR_NO_ENCODE_DEVICE"
  ///  (or NV_ENC_ERR_UNSUPPORTED_DEVICE, which driver 580 returns on an H200 to an API 11.1 session),
  ///  "session limit reached on this GeForce (NV_ENC_ERR_OUT_OF_MEMORY...)", "driver too old for NVENC API 11.1 (...)",
  ///  "NVENC support not built (nv-codec-headers missing at build time)", or "<call> failed: <NVENCSTATUS name>".
  /// Empty when available.
  std::string reason;
  /// The raw cause: an NVENCSTATUS name ("NV_ENC_ERR_UNSUPPORTED_DEVICE"), a CUresult name, "dlopen",
  /// "dlsym" or "not built". Empty when available.
  std::string status;
  int device = -1;          ///< CUDA device ordinal probed
  std::string deviceName;   ///< "NVIDIA H200", when the device could be opened
  std::string driverApi;    ///< highest NVENC API the driver offers ("13.0"); empty when unknown
  std::string builtApi;     ///< NVENC API zerohop was built against ("11.1"); empty when not built
  bool h264 = false;        ///< the session lists H.264
  bool hevc = false;        ///< the session lists HEVC
};

/// Probes CUDA device `device` (-1 = device 0). Takes well under a second when the library or the
/// device is missing; opening the session costs one CUDA context initialisation otherwise.
/// Never throws.
ZEROHOP_API NvencAvailability probeNvenc(int device = -1);

/// What the encoder setting resolves to for frames in GPU memory (the GPU path): NVENC when asked for
/// ("nvenc") or allowed ("auto") and `nvenc` says a session opens; x264 on a host copy otherwise, with
/// the reason in words for the log line.
struct GpuEncoderChoice {
  bool nvenc = false;
  std::string reason;  ///< "NVENC encodes the frames from VRAM: ...", "... x264 ... because NVENC is
                       ///< unavailable: <reason>"
};
/// The decision alone, from a probe result (testable with any answer). Throws Error(kUnavailable)
/// SettingError "NVENC: <reason>; use the x264 encoder" for "nvenc" where NVENC is unavailable, and
/// Error(kInvalidArgument) for an encoder name other than auto, x264 or nvenc.
ZEROHOP_API GpuEncoderChoice chooseGpuEncoder(const std::string& requested, const NvencAvailability& nvenc);
/// The same with the real probe of `device` (only when the answer depends on it: not for "x264").
ZEROHOP_API GpuEncoderChoice chooseGpuEncoder(const std::string& requested, int device);

/// One line for logs and `zerohop probe`: "available on NVIDIA RTX 4090 (H.264, HEVC; driver API 12.2)"
/// or "unavailable: <reason>".
ZEROHOP_API std::string describe(const NvencAvailability& nvenc);

}  // namespace zerohop
