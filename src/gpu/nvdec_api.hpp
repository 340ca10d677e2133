#pragma once
// Internal: the CUDA driver API and the NVDEC ("cuvid") API, loaded at run time through
// nv-codec-headers' dynlink loader (dlopen of libcuda.so.1 and libnvcuvid.so.1), so nothing links
// them and binaries start without the driver. Plus the RAII owners the decoder and the probe share.
// Thread-safety: NvdecApi::load() is thread-safe (once per process, never unloaded); the owners are
// move-only and thread-bound while used.

#include <string>
#include <string_view>
#include <utility>

// The loader reports a failed dlopen/dlsym through this hook; nvdec_api.cpp keeps the text.
namespace zerohop::nvdec {
void recordLoadFailure(void* failure, const char* format, const char* name) noexcept;
}  // namespace zerohop::nvdec
#define FFNV_LOG_FUNC(logctx, msg, ...) ::zerohop::nvdec::recordLoadFailure((logctx), (msg), __VA_ARGS__)
#define FFNV_DEBUG_LOG_FUNC(logctx, msg, ...)
#include <dynlink_loader.h>

#include "gpu/owned_handle.hpp"

namespace zerohop::nvdec {

inline constexpr const char* kCuvidLibraryName = "libnvcuvid.so.1";

struct NvdecApi {
  const CudaFunctions* cu = nullptr;
  const CuvidFunctions* cuvid = nullptr;

  /// Loads both libraries once per process. Returns nullptr and sets `whyNot` (a probe reason:
  /// "no CUDA device (libcuda.so.1 could not be loaded: ...)", "libnvcuvid.so.1 not found: ...")
  /// otherwise.
  static const NvdecApi* load(std::string* whyNot);

  /// "CUDA_ERROR_NO_DEVICE", or "CUresult 100" when the driver has no name for it.
  std::string errorName(CUresult result) const;
  /// Throws Error (kUnavailable for no device / not supported, kInvalidArgument for bad values,
  /// kDevice otherwise) "<call> failed: <name>" unless result is CUDA_SUCCESS.
  void check(CUresult result, std::string_view call) const;
};

/// Logs "<call> failed: CUresult <n>" for a teardown call; never throws.
void logDestroyFailure(const char* call, CUresult result) noexcept;

/// cuDevicePrimaryCtxRetain / Release: the context the CUDA runtime uses on that device.
class PrimaryContext {
 public:
  PrimaryContext(const NvdecApi& api, int ordinal);  ///< cuInit + cuDeviceGet + retain; throws Error
  ~PrimaryContext();
  PrimaryContext(const PrimaryContext&) = delete;
  PrimaryContext& operator=(const PrimaryContext&) = delete;
  CUcontext get() const noexcept { return ctx_; }
  CUdevice device() const noexcept { return device_; }

 private:
  const NvdecApi& api_;
  CUdevice device_ = 0;
  CUcontext ctx_ = nullptr;
};

/// Makes a context current on this thread for a scope (cuCtxPushCurrent / cuCtxPopCurrent).
class ContextScope {
 public:
  ContextScope(const NvdecApi& api, CUcontext ctx);  ///< throws Error
  ~ContextScope();
  ContextScope(const ContextScope&) = delete;
  ContextScope& operator=(const ContextScope&) = delete;

 private:
  const NvdecApi& api_;
};

/// A move-only owner of one NVDEC handle (parser, decoder, context lock) and its destroy call.
/// Destroying it logs a failure and never throws; the decoder's needs its context current.
inline void reportDestroy(CUresult result, const char* call) noexcept {
  if (result != CUDA_SUCCESS) logDestroyFailure(call, result);
}
template <class Handle>
using Owned = OwnedHandle<Handle, CUresult, &reportDestroy>;

}  // namespace zerohop::nvdec
