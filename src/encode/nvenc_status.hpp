#pragma once
// NVENC failures in words: the pure mapping from a dlopen error, an NVENCSTATUS or a CUDA driver
// answer to the one-line reason NvencAvailability carries. No device needed; unit-tested.
// Statuses are plain ints (NVENCSTATUS values) so this header needs no SDK header.
// Thread-safety: pure functions, reentrant.

#include <cstdint>
#include <string>
#include <string_view>

namespace zerohop::encode {

inline constexpr const char* kNvencLibraryName = "libnvidia-encode.so.1";

/// "NV_ENC_ERR_NO_ENCODE_DEVICE" for a known NVENCSTATUS value, "NVENCSTATUS <n>" otherwise.
std::string nvencStatusName(int status);

/// NvEncodeAPIGetMaxSupportedVersion packs (major << 4) | minor: 0xb1 -> "11.1".
std::string nvencApiVersionText(std::uint32_t packed);

/// dlopen("libnvidia-encode.so.1") failed with `dlerrorText`: "libnvidia-encode.so.1 not found:
/// install the NVIDIA driver's encode library (e.g. libnvidia-encode-<ver>) (<dlerror>)" when the
/// file is missing, "libnvidia-encode.so.1 could not be loaded: <dlerror>" otherwise.
std::string nvencLibraryFailureReason(std::string_view dlerrorText);

/// The driver offers a lower NVENC API than the headers zerohop was built with:
/// "driver too old for NVENC API 11.1 (it offers 10.0): update the NVIDIA driver (R470 or newer)".
/// `driverPacked` = 0 when the driver did not say (NV_ENC_ERR_INVALID_VERSION from a later call).
std::string nvencDriverTooOldReason(std::uint32_t builtPacked, std::uint32_t driverPacked);

/// No usable CUDA device: "no CUDA device" or "no CUDA device (<detail>)".
std::string noCudaDeviceReason(std::string_view detail = {});

/// The reason for `call` (NvEncodeAPICreateInstance, nvEncOpenEncodeSessionEx, nvEncGetEncodeGUIDs...)
/// returning `status`:
///  NV_ENC_ERR_NO_ENCODE_DEVICE, NV_ENC_ERR_UNSUPPORTED_DEVICE (driver 580 on an H200, which has no encoder)
///    -> "this GPU has no video encoder (A100/H100/H200): <status name>"
///  NV_ENC_ERR_OUT_OF_MEMORY, NV_ENC_ERR_INCOMPATIBLE_CLIENT_KEY -> "session limit reached on this GeForce (...)"
///  NV_ENC_ERR_INVALID_VERSION -> nvencDriverTooOldReason(built, 0)
///  anything else -> "<call> failed: <NVENCSTATUS name>"
std::string nvencFailureReason(std::string_view call, int status, std::uint32_t builtPacked);

}  // namespace zerohop::encode
