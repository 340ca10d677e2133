#pragma once
// The CUDA driver API loaded at run time (dlopen("libcuda.so.1")), for the NVENC probe and the NVENC
// encoder: nothing links libcuda at build time, so binaries start on machines without the driver.
// Types come from nv-codec-headers' dynlink_cuda.h (ZEROHOP_NVENC_HEADERS_DIR), not the CUDA toolkit.
// Thread-safety: CudaDriver::load() is thread-safe (loaded once per process, never unloaded);
// PrimaryContext, ScopedCurrentContext and CuStream are move-only owners, thread-bound while used.

#include <dynlink_cuda.h>

#include <string>
#include <string_view>

#include "shared_library.hpp"

namespace zerohop::encode {

// Not in dynlink_cuda.h.
typedef CUresult CUDAAPI tcuStreamWaitEvent(CUstream hStream, CUevent hEvent, unsigned int flags);

/// CUresult values the probe tells apart (dynlink_cuda.h carries only a few names).
inline constexpr int kCudaErrorInsufficientDriver = 35;  // CUDA_ERROR_INSUFFICIENT_DRIVER
inline constexpr int kCudaErrorNoDevice = 100;           // CUDA_ERROR_NO_DEVICE

struct CudaDriver {
  tcuInit* init = nullptr;
  tcuDeviceGetCount* deviceGetCount = nullptr;
  tcuDeviceGet* deviceGet = nullptr;
  tcuDeviceGetName* deviceGetName = nullptr;
  tcuDevicePrimaryCtxRetain* primaryCtxRetain = nullptr;
  tcuDevicePrimaryCtxRelease* primaryCtxRelease = nullptr;
  tcuCtxPushCurrent_v2* ctxPushCurrent = nullptr;
  tcuCtxPopCurrent_v2* ctxPopCurrent = nullptr;
  tcuStreamCreate* streamCreate = nullptr;
  tcuStreamDestroy_v2* streamDestroy = nullptr;
  tcuStreamWaitEvent* streamWaitEvent = nullptr;
  tcuStreamSynchronize* streamSynchronize = nullptr;
  tcuMemcpy2DAsync_v2* memcpy2DAsync = nullptr;
  tcuGetErrorName* getErrorName = nullptr;

  /// Loads libcuda.so.1 and its entry points once per process. Returns nullptr and sets `whyNot`
  /// ("libcuda.so.1 could not be loaded (<dlerror>)" or "libcuda.so.1 lacks <symbol>") otherwise.
  static const CudaDriver* load(std::string* whyNot);

  /// "CUDA_ERROR_NO_DEVICE", or "CUresult 100" when the driver has no name for it.
  std::string errorName(CUresult result) const;
  /// Throws Error(kDevice, "<call> failed: <errorName>") unless result is CUDA_SUCCESS.
  void check(CUresult result, std::string_view call) const;
};

/// cuDevicePrimaryCtxRetain / Release: the device's primary context, the one the CUDA runtime
/// (cudaMalloc, our kernels) uses, so device pointers from the pipeline are valid in it.
class PrimaryContext {
 public:
  PrimaryContext() = default;
  /// Throws Error(kDevice) naming cuDevicePrimaryCtxRetain and the CUresult.
  PrimaryContext(const CudaDriver& driver, CUdevice device);
  ~PrimaryContext() { reset(); }
  PrimaryContext(PrimaryContext&& other) noexcept;
  PrimaryContext& operator=(PrimaryContext&& other) noexcept;
  PrimaryContext(const PrimaryContext&) = delete;
  PrimaryContext& operator=(const PrimaryContext&) = delete;

  CUcontext get() const noexcept { return ctx_; }
  void reset() noexcept;  ///< releases (idempotent; logs a failure, never throws)

 private:
  const CudaDriver* driver_ = nullptr;
  CUdevice device_ = 0;
  CUcontext ctx_ = nullptr;
};

/// Makes `ctx` current on this thread for a scope (cuCtxPushCurrent / cuCtxPopCurrent).
class ScopedCurrentContext {
 public:
  /// Throws Error(kDevice) naming cuCtxPushCurrent and the CUresult.
  ScopedCurrentContext(const CudaDriver& driver, CUcontext ctx);
  ~ScopedCurrentContext();
  ScopedCurrentContext(const ScopedCurrentContext&) = delete;
  ScopedCurrentContext& operator=(const ScopedCurrentContext&) = delete;

 private:
  const CudaDriver& driver_;
};

/// A non-blocking CUDA stream in a context (cuStreamCreate / cuStreamDestroy).
class CuStream {
 public:
  CuStream() = default;
  /// Throws Error(kDevice) naming cuStreamCreate and the CUresult.
  CuStream(const CudaDriver& driver, CUcontext ctx);
  ~CuStream() { reset(); }
  CuStream(CuStream&& other) noexcept;
  CuStream& operator=(CuStream&& other) noexcept;
  CuStream(const CuStream&) = delete;
  CuStream& operator=(const CuStream&) = delete;

  CUstream get() const noexcept { return stream_; }
  void reset() noexcept;  ///< destroys (idempotent; logs a failure, never throws)

 private:
  const CudaDriver* driver_ = nullptr;
  CUcontext ctx_ = nullptr;
  CUstream stream_ = nullptr;
};

}  // namespace zerohop::encode
