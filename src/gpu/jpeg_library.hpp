#pragma once
// Internal: libnvjpeg loaded at run time (dlopen), its entry points, and how every nvJPEG call is
// checked. Loaded once per process; never unloaded. Search order: $ZEROHOP_NVJPEG_LIBRARY, then
// libnvjpeg.so.13 on the loader path, then the CUDA toolkit's and the nvidia-nvjpeg wheel's lib
// folders known at build time.
// Thread-safety: nvjpegLibrary() is thread-safe; the entry points are nvJPEG's own (handles are
// thread-bound in zerohop).

#include <nvjpeg.h>

#include <string>
#include <string_view>

namespace zerohop::jpeg {

struct Library {
  std::string path;     ///< the file that was loaded
  std::string version;  ///< "13.0.2"
  decltype(&::nvjpegGetProperty) getProperty = nullptr;
  decltype(&::nvjpegCreateEx) createEx = nullptr;
  decltype(&::nvjpegDestroy) destroy = nullptr;
  decltype(&::nvjpegGetHardwareDecoderInfo) getHardwareDecoderInfo = nullptr;
  decltype(&::nvjpegJpegStateCreate) jpegStateCreate = nullptr;
  decltype(&::nvjpegJpegStateDestroy) jpegStateDestroy = nullptr;
  decltype(&::nvjpegGetImageInfo) getImageInfo = nullptr;
  decltype(&::nvjpegDecodeBatchedInitialize) decodeBatchedInitialize = nullptr;
  decltype(&::nvjpegDecodeBatched) decodeBatched = nullptr;
  decltype(&::nvjpegDecodeBatchedSupported) decodeBatchedSupported = nullptr;
  decltype(&::nvjpegBufferPinnedCreate) bufferPinnedCreate = nullptr;
  decltype(&::nvjpegBufferPinnedDestroy) bufferPinnedDestroy = nullptr;
  decltype(&::nvjpegBufferDeviceCreate) bufferDeviceCreate = nullptr;
  decltype(&::nvjpegBufferDeviceDestroy) bufferDeviceDestroy = nullptr;
  decltype(&::nvjpegStateAttachPinnedBuffer) stateAttachPinnedBuffer = nullptr;
  decltype(&::nvjpegStateAttachDeviceBuffer) stateAttachDeviceBuffer = nullptr;
  decltype(&::nvjpegJpegStreamCreate) jpegStreamCreate = nullptr;
  decltype(&::nvjpegJpegStreamDestroy) jpegStreamDestroy = nullptr;
  decltype(&::nvjpegJpegStreamParse) jpegStreamParse = nullptr;
  decltype(&::nvjpegJpegStreamParseHeader) jpegStreamParseHeader = nullptr;
  decltype(&::nvjpegJpegStreamGetFrameDimensions) jpegStreamGetFrameDimensions = nullptr;
  decltype(&::nvjpegJpegStreamGetComponentsNum) jpegStreamGetComponentsNum = nullptr;
  decltype(&::nvjpegJpegStreamGetComponentDimensions) jpegStreamGetComponentDimensions = nullptr;
  decltype(&::nvjpegJpegStreamGetChromaSubsampling) jpegStreamGetChromaSubsampling = nullptr;
  decltype(&::nvjpegDecodeParamsCreate) decodeParamsCreate = nullptr;
  decltype(&::nvjpegDecodeParamsDestroy) decodeParamsDestroy = nullptr;
  decltype(&::nvjpegDecodeParamsSetOutputFormat) decodeParamsSetOutputFormat = nullptr;
  decltype(&::nvjpegDecoderCreate) decoderCreate = nullptr;
  decltype(&::nvjpegDecoderDestroy) decoderDestroy = nullptr;
  decltype(&::nvjpegDecoderStateCreate) decoderStateCreate = nullptr;
  decltype(&::nvjpegDecodeJpegHost) decodeJpegHost = nullptr;
  decltype(&::nvjpegDecodeJpegTransferToDevice) decodeJpegTransferToDevice = nullptr;
  decltype(&::nvjpegDecodeJpegDevice) decodeJpegDevice = nullptr;
};

/// The loaded library, or nullptr with `why` set ("libnvjpeg.so.13 not found (tried ...)", "symbol
/// nvjpegDecodeJpegHost missing in ...").
const Library* nvjpegLibrary(std::string* why = nullptr) noexcept;

/// Like nvjpegLibrary() but throws Error(kUnavailable) with the reason.
const Library& requireNvjpeg();

/// "NVJPEG_STATUS_BAD_JPEG".
const char* statusName(nvjpegStatus_t status) noexcept;

/// Throws zerohop::Error when `status` is not NVJPEG_STATUS_SUCCESS: "<call> failed:
/// NVJPEG_STATUS_<NAME> (<n>): <what it means> (<context>)". Bad or truncated bitstreams are
/// kInvalidArgument, unsupported streams or hardware kUnsupported, allocation kUnavailable, the rest kDevice.
void check(nvjpegStatus_t status, std::string_view call, std::string_view context = {});

/// For destructors: logs a failed teardown call and never throws.
void logIfFailed(nvjpegStatus_t status, std::string_view call) noexcept;

}  // namespace zerohop::jpeg
