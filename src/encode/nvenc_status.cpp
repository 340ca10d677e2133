#include "nvenc_status.hpp"

#include <nvEncodeAPI.h>

namespace zerohop::encode {

std::string nvencStatusName(int status) {
  switch (static_cast<NVENCSTATUS>(status)) {
#define ZEROHOP_NVENC_STATUS(name) \
  case name:                       \
    return #name;
    ZEROHOP_NVENC_STATUS(NV_ENC_SUCCESS)
    ZEROHOP_NVENC_STATUS(NV_ENC_ERR_NO_ENCODE_DEVICE)
    ZEROHOP_NVENC_STATUS(NV_ENC_ERR_UNSUPPORTED_DEVICE)
    ZEROHOP_NVENC_STATUS(NV_ENC_ERR_INVALID_ENCODERDEVICE)
    ZEROHOP_NVENC_STATUS(NV_ENC_ERR_INVALID_DEVICE)
    ZEROHOP_NVENC_STATUS(NV_ENC_ERR_DEVICE_NOT_EXIST)
    ZEROHOP_NVENC_STATUS(NV_ENC_ERR_INVALID_PTR)
    ZEROHOP_NVENC_STATUS(NV_ENC_ERR_INVALID_EVENT)
    ZEROHOP_NVENC_STATUS(NV_ENC_ERR_INVALID_PARAM)
    ZEROHOP_NVENC_STATUS(NV_ENC_ERR_INVALID_CALL)
    ZEROHOP_NVENC_STATUS(NV_ENC_ERR_OUT_OF_MEMORY)
    ZEROHOP_NVENC_STATUS(NV_ENC_ERR_ENCODER_NOT_INITIALIZED)
    ZEROHOP_NVENC_STATUS(NV_ENC_ERR_UNSUPPORTED_PARAM)
    ZEROHOP_NVENC_STATUS(NV_ENC_ERR_LOCK_BUSY)
    ZEROHOP_NVENC_STATUS(NV_ENC_ERR_NOT_ENOUGH_BUFFER)
    ZEROHOP_NVENC_STATUS(NV_ENC_ERR_INVALID_VERSION)
    ZEROHOP_NVENC_STATUS(NV_ENC_ERR_MAP_FAILED)
    ZEROHOP_NVENC_STATUS(NV_ENC_ERR_NEED_MORE_INPUT)
    ZEROHOP_NVENC_STATUS(NV_ENC_ERR_ENCODER_BUSY)
    ZEROHOP_NVENC_STATUS(NV_ENC_ERR_EVENT_NOT_REGISTERD)
    ZEROHOP_NVENC_STATUS(NV_ENC_ERR_GENERIC)
    ZEROHOP_NVENC_STATUS(NV_ENC_ERR_INCOMPATIBLE_CLIENT_KEY)
    ZEROHOP_NVENC_STATUS(NV_ENC_ERR_UNIMPLEMENTED)
    ZEROHOP_NVENC_STATUS(NV_ENC_ERR_RESOURCE_REGISTER_FAILED)
    ZEROHOP_NVENC_STATUS(NV_ENC_ERR_RESOURCE_NOT_REGISTERED)
    ZEROHOP_NVENC_STATUS(NV_ENC_ERR_RESOURCE_NOT_MAPPED)
#undef ZEROHOP_NVENC_STATUS
  }
  return "NVENCSTATUS " + std::to_string(status);
}

std::string nvencApiVersionText(std::uint32_t packed) {
  return std::to_string(packed >> 4) + "." + std::to_string(packed & 0xfu);
}

std::string nvencLibraryFailureReason(std::string_view dlerrorText) {
  const bool missing = dlerrorText.empty() || dlerrorText.find("No such file") != std::string_view::npos ||
                       dlerrorText.find("cannot open shared object file") != std::string_view::npos;
  std::string reason = std::string(kNvencLibraryName);
  if (missing) {
    reason += " not found: install the NVIDIA driver's encode library (e.g. libnvidia-encode-<ver>)";
    if (!dlerrorText.empty()) reason += " (" + std::string(dlerrorText) + ")";
  } else {
    reason += " could not be loaded: " + std::string(dlerrorText);
  }
  return reason;
}

std::string nvencDriverTooOldReason(std::uint32_t builtPacked, std::uint32_t driverPacked) {
  std::string reason = "driver too old for NVENC API " + nvencApiVersionText(builtPacked);
  reason += driverPacked != 0 ? " (it offers " + nvencApiVersionText(driverPacked) + ")"
                              : std::string(" (NV_ENC_ERR_INVALID_VERSION)");
  // Video Codec SDK 11.1 needs R470 on Linux; newer headers need newer drivers.
  reason += ": update the NVIDIA driver";
  if (builtPacked == ((11u << 4) | 1u)) reason += " (R470 or newer)";
  return reason;
}

std::string noCudaDeviceReason(std::string_view detail) {
  return detail.empty() ? std::string("no CUDA device") : "no CUDA device (" + std::string(detail) + ")";
}

std::string nvencFailureReason(std::string_view call, int status, std::uint32_t builtPacked) {
  switch (static_cast<NVENCSTATUS>(status)) {
    case NV_ENC_ERR_NO_ENCODE_DEVICE:
    // Driver 580 returns this on an H200 (no NVENC) to a session opened with the API 11.1 headers
    // (docs/nvenc.md); GPUs without NVENC (GT 1030, MX) return it too.
    case NV_ENC_ERR_UNSUPPORTED_DEVICE:
      return "this GPU has no video encoder (A100/H100/H200): " + nvencStatusName(status);
    case NV_ENC_ERR_OUT_OF_MEMORY:
    case NV_ENC_ERR_INCOMPATIBLE_CLIENT_KEY:
      // GeForce drivers cap concurrent encode sessions per system; the session past the cap is
      // refused with one of these. (A real out-of-VRAM gives the same status.)
      return "session limit reached on this GeForce (" + nvencStatusName(status) + " from " + std::string(call) +
             ": the driver's cap on concurrent NVENC sessions, or no video memory left; close another encoder "
             "(OBS, a browser, ffmpeg) or see docs/nvenc.md)";
    case NV_ENC_ERR_INVALID_VERSION:
      return nvencDriverTooOldReason(builtPacked, 0);
    default:
      return std::string(call) + " failed: " + nvencStatusName(status);
  }
}

}  // namespace zerohop::encode
