// Loading libnvjpeg at run time and the one way nvJPEG statuses become zerohop::Error.
#include "gpu/jpeg_library.hpp"

#include <dlfcn.h>

#include <cstdlib>
#include <mutex>
#include <vector>

#include "zerohop/error.hpp"
#include "zerohop/log.hpp"

namespace zerohop::jpeg {
namespace {

template <typename Fn>
bool bind(void* so, const char* name, Fn& fn, std::string& missing) {
  fn = reinterpret_cast<Fn>(dlsym(so, name));
  if (!fn && missing.empty()) missing = name;
  return fn != nullptr;
}

struct Loaded {
  Library lib;
  bool ok = false;
  std::string why;
};

Loaded load() {
  Loaded out;
  std::vector<std::string> candidates;
  if (const char* env = std::getenv("ZEROHOP_NVJPEG_LIBRARY"); env && *env) candidates.emplace_back(env);
  candidates.emplace_back("libnvjpeg.so.13");
#ifdef ZEROHOP_NVJPEG_FALLBACK_DIRS
  // Colon-separated folders known at build time (the CUDA toolkit's lib64, the wheel's lib).
  const std::string dirs = ZEROHOP_NVJPEG_FALLBACK_DIRS;
  for (std::size_t start = 0; start <= dirs.size();) {
    const std::size_t end = std::min(dirs.find(':', start), dirs.size());
    if (end > start) candidates.push_back(dirs.substr(start, end - start) + "/libnvjpeg.so.13");
    start = end + 1;
  }
#endif
  void* so = nullptr;
  std::string tried;
  for (const auto& c : candidates) {
    so = dlopen(c.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (so) {
      out.lib.path = c;
      break;
    }
    const char* err = dlerror();
    tried += (tried.empty() ? "" : "; ") + std::string(err ? err : c);
  }
  if (!so) {
    out.why = "libnvjpeg.so.13 could not be loaded (" + tried + ")";
    return out;
  }
  Library& l = out.lib;
  std::string missing;
  bind(so, "nvjpegGetProperty", l.getProperty, missing);
  bind(so, "nvjpegCreateEx", l.createEx, missing);
  bind(so, "nvjpegDestroy", l.destroy, missing);
  bind(so, "nvjpegGetHardwareDecoderInfo", l.getHardwareDecoderInfo, missing);
  bind(so, "nvjpegJpegStateCreate", l.jpegStateCreate, missing);
  bind(so, "nvjpegJpegStateDestroy", l.jpegStateDestroy, missing);
  bind(so, "nvjpegGetImageInfo", l.getImageInfo, missing);
  bind(so, "nvjpegDecodeBatchedInitialize", l.decodeBatchedInitialize, missing);
  bind(so, "nvjpegDecodeBatched", l.decodeBatched, missing);
  bind(so, "nvjpegDecodeBatchedSupported", l.decodeBatchedSupported, missing);
  bind(so, "nvjpegBufferPinnedCreate", l.bufferPinnedCreate, missing);
  bind(so, "nvjpegBufferPinnedDestroy", l.bufferPinnedDestroy, missing);
  bind(so, "nvjpegBufferDeviceCreate", l.bufferDeviceCreate, missing);
  bind(so, "nvjpegBufferDeviceDestroy", l.bufferDeviceDestroy, missing);
  bind(so, "nvjpegStateAttachPinnedBuffer", l.stateAttachPinnedBuffer, missing);
  bind(so, "nvjpegStateAttachDeviceBuffer", l.stateAttachDeviceBuffer, missing);
  bind(so, "nvjpegJpegStreamCreate", l.jpegStreamCreate, missing);
  bind(so, "nvjpegJpegStreamDestroy", l.jpegStreamDestroy, missing);
  bind(so, "nvjpegJpegStreamParse", l.jpegStreamParse, missing);
  bind(so, "nvjpegJpegStreamParseHeader", l.jpegStreamParseHeader, missing);
  bind(so, "nvjpegJpegStreamGetFrameDimensions", l.jpegStreamGetFrameDimensions, missing);
  bind(so, "nvjpegJpegStreamGetComponentsNum", l.jpegStreamGetComponentsNum, missing);
  bind(so, "nvjpegJpegStreamGetComponentDimensions", l.jpegStreamGetComponentDimensions, missing);
  bind(so, "nvjpegJpegStreamGetChromaSubsampling", l.jpegStreamGetChromaSubsampling, missing);
  bind(so, "nvjpegDecodeParamsCreate", l.decodeParamsCreate, missing);
  bind(so, "nvjpegDecodeParamsDestroy", l.decodeParamsDestroy, missing);
  bind(so, "nvjpegDecodeParamsSetOutputFormat", l.decodeParamsSetOutputFormat, missing);
  bind(so, "nvjpegDecoderCreate", l.decoderCreate, missing);
  bind(so, "nvjpegDecoderDestroy", l.decoderDestroy, missing);
  bind(so, "nvjpegDecoderStateCreate", l.decoderStateCreate, missing);
  bind(so, "nvjpegDecodeJpegHost", l.decodeJpegHost, missing);
  bind(so, "nvjpegDecodeJpegTransferToDevice", l.decodeJpegTransferToDevice, missing);
  bind(so, "nvjpegDecodeJpegDevice", l.decodeJpegDevice, missing);
  if (!missing.empty()) {
    out.why = "symbol " + missing + " missing in " + l.path;
    return out;  // the library stays loaded; nothing else can use it either
  }
  int major = 0, minor = 0, patch = 0;
  l.getProperty(MAJOR_VERSION, &major);
  l.getProperty(MINOR_VERSION, &minor);
  l.getProperty(PATCH_LEVEL, &patch);
  l.version = std::to_string(major) + "." + std::to_string(minor) + "." + std::to_string(patch);
  out.ok = true;
  return out;
}

const char* statusMeaning(nvjpegStatus_t status) noexcept {
  switch (status) {
    case NVJPEG_STATUS_SUCCESS: return "success";
    case NVJPEG_STATUS_NOT_INITIALIZED: return "library handle not initialised";
    case NVJPEG_STATUS_INVALID_PARAMETER: return "a parameter is invalid";
    case NVJPEG_STATUS_BAD_JPEG: return "the JPEG bitstream is corrupt";
    case NVJPEG_STATUS_JPEG_NOT_SUPPORTED: return "this JPEG is not supported";
    case NVJPEG_STATUS_ALLOCATOR_FAILURE: return "memory allocation failed";
    case NVJPEG_STATUS_EXECUTION_FAILED: return "a CUDA call or kernel failed";
    case NVJPEG_STATUS_ARCH_MISMATCH: return "not supported on this GPU";
    case NVJPEG_STATUS_INTERNAL_ERROR: return "internal nvJPEG error";
    case NVJPEG_STATUS_IMPLEMENTATION_NOT_SUPPORTED: return "not implemented for this backend";
    case NVJPEG_STATUS_INCOMPLETE_BITSTREAM: return "the JPEG bitstream is incomplete (truncated)";
  }
  return "unknown status";
}

}  // namespace

const Library* nvjpegLibrary(std::string* why) noexcept {
  static const Loaded loaded = load();
  if (!loaded.ok) {
    if (why) *why = loaded.why;
    return nullptr;
  }
  return &loaded.lib;
}

const Library& requireNvjpeg() {
  std::string why;
  const Library* lib = nvjpegLibrary(&why);
  if (!lib) throw Error(Errc::kUnavailable, "nvJPEG unavailable: " + why);
  return *lib;
}

const char* statusName(nvjpegStatus_t status) noexcept {
  switch (status) {
    case NVJPEG_STATUS_SUCCESS: return "NVJPEG_STATUS_SUCCESS";
    case NVJPEG_STATUS_NOT_INITIALIZED: return "NVJPEG_STATUS_NOT_INITIALIZED";
    case NVJPEG_STATUS_INVALID_PARAMETER: return "NVJPEG_STATUS_INVALID_PARAMETER";
    case NVJPEG_STATUS_BAD_JPEG: return "NVJPEG_STATUS_BAD_JPEG";
    case NVJPEG_STATUS_JPEG_NOT_SUPPORTED: return "NVJPEG_STATUS_JPEG_NOT_SUPPORTED";
    case NVJPEG_STATUS_ALLOCATOR_FAILURE: return "NVJPEG_STATUS_ALLOCATOR_FAILURE";
    case NVJPEG_STATUS_EXECUTION_FAILED: return "NVJPEG_STATUS_EXECUTION_FAILED";
    case NVJPEG_STATUS_ARCH_MISMATCH: return "NVJPEG_STATUS_ARCH_MISMATCH";
    case NVJPEG_STATUS_INTERNAL_ERROR: return "NVJPEG_STATUS_INTERNAL_ERROR";
    case NVJPEG_STATUS_IMPLEMENTATION_NOT_SUPPORTED: return "NVJPEG_STATUS_IMPLEMENTATION_NOT_SUPPORTED";
    case NVJPEG_STATUS_INCOMPLETE_BITSTREAM: return "NVJPEG_STATUS_INCOMPLETE_BITSTREAM";
  }
  return "NVJPEG_STATUS_UNKNOWN";
}

void check(nvjpegStatus_t status, std::string_view call, std::string_view context) {
  if (status == NVJPEG_STATUS_SUCCESS) return;
  Errc code = Errc::kDevice;
  switch (status) {
    case NVJPEG_STATUS_BAD_JPEG:
    case NVJPEG_STATUS_INCOMPLETE_BITSTREAM:
    case NVJPEG_STATUS_INVALID_PARAMETER: code = Errc::kInvalidArgument; break;
    case NVJPEG_STATUS_JPEG_NOT_SUPPORTED:
    case NVJPEG_STATUS_ARCH_MISMATCH:
    case NVJPEG_STATUS_IMPLEMENTATION_NOT_SUPPORTED: code = Errc::kUnsupported; break;
    case NVJPEG_STATUS_ALLOCATOR_FAILURE: code = Errc::kUnavailable; break;
    default: break;
  }
  std::string msg(call);
  msg += " failed: ";
  msg += statusName(status);
  msg += " (" + std::to_string(static_cast<int>(status)) + "): ";
  msg += statusMeaning(status);
  if (!context.empty()) {
    msg += " (";
    msg += context;
    msg += ")";
  }
  throw Error(code, std::move(msg));
}

void logIfFailed(nvjpegStatus_t status, std::string_view call) noexcept {
  if (status == NVJPEG_STATUS_SUCCESS) return;
  try {
    log::error(std::string(call) + " failed: " + statusName(status));
  } catch (...) {
  }
}

}  // namespace zerohop::jpeg
