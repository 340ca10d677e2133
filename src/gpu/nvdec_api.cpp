// The run-time loaded CUDA driver + NVDEC entry points (nv-codec-headers' dynlink_loader.h).
#include "gpu/nvdec_api.hpp"

#include <dlfcn.h>


#include "zerohop/error.hpp"
#include "zerohop/log.hpp"

namespace zerohop::nvdec {

// What the loader could not load: a library (dlerror's text) or a symbol of one.
struct LoadFailure {
  std::string text;
  bool library = false;
};

void recordLoadFailure(void* failure, const char* /*format*/, const char* name) noexcept {
  auto* f = static_cast<LoadFailure*>(failure);
  if (f == nullptr || !f->text.empty() || name == nullptr) return;  // keep the first failure
  try {
    f->library = std::string_view(name).find(".so") != std::string_view::npos;
    const char* detail = dlerror();
    f->text = f->library ? (detail != nullptr ? detail : name) : std::string("lacks ") + name;
  } catch (...) {
  }
}

namespace {

struct Loaded {
  CudaFunctions* cu = nullptr;
  CuvidFunctions* cuvid = nullptr;
  std::string whyNot;
  NvdecApi api;
};

Loaded loadOnce() {
  Loaded l;
  LoadFailure failure;
  if (cuda_load_functions(&l.cu, &failure) != 0) {
    l.whyNot = failure.library ? "no CUDA device (libcuda.so.1 could not be loaded: " + failure.text + ")"
                               : "no CUDA device (libcuda.so.1 " + failure.text + ": driver too old)";
    return l;
  }
  failure = {};
  if (cuvid_load_functions(&l.cuvid, &failure) != 0) {
    // The library missing is the common case: a driver installed without its decode library.
    l.whyNot = failure.library ? std::string(kCuvidLibraryName) +
                                     " not found: install the NVIDIA driver's decode library (e.g. libnvidia-decode-<ver>) (" +
                                     failure.text + ")"
                               : std::string(kCuvidLibraryName) + " " + failure.text + ": update the NVIDIA driver";
    return l;
  }
  l.api.cu = l.cu;
  l.api.cuvid = l.cuvid;
  return l;  // never freed: the libraries stay loaded for the life of the process
}

}  // namespace

const NvdecApi* NvdecApi::load(std::string* whyNot) {
  static const Loaded loaded = loadOnce();  // thread-safe initialisation
  if (loaded.api.cuvid == nullptr) {
    if (whyNot != nullptr) *whyNot = loaded.whyNot;
    return nullptr;
  }
  return &loaded.api;
}

std::string NvdecApi::errorName(CUresult result) const {
  const char* name = nullptr;
  if (cu->cuGetErrorName(result, &name) == CUDA_SUCCESS && name != nullptr) return name;
  return "CUresult " + std::to_string(static_cast<int>(result));
}

void NvdecApi::check(CUresult result, std::string_view call) const {
  if (result == CUDA_SUCCESS) return;
  Errc code = Errc::kDevice;
  switch (static_cast<int>(result)) {
    case 2:    // CUDA_ERROR_OUT_OF_MEMORY
    case 35:   // CUDA_ERROR_INSUFFICIENT_DRIVER
    case 100:  // CUDA_ERROR_NO_DEVICE
    case 801:  // CUDA_ERROR_NOT_SUPPORTED
      code = Errc::kUnavailable;
      break;
    case 1:  // CUDA_ERROR_INVALID_VALUE
      code = Errc::kInvalidArgument;
      break;
    default: break;
  }
  throw Error(code, std::string(call) + " failed: " + errorName(result));
}

void logDestroyFailure(const char* call, CUresult result) noexcept {
  try {
    log::warn(call, " failed: CUresult ", static_cast<int>(result));
  } catch (...) {
  }
}

PrimaryContext::PrimaryContext(const NvdecApi& api, int ordinal) : api_(api) {
  api.check(api.cu->cuInit(0), "cuInit");
  api.check(api.cu->cuDeviceGet(&device_, ordinal), "cuDeviceGet(" + std::to_string(ordinal) + ")");
  api.check(api.cu->cuDevicePrimaryCtxRetain(&ctx_, device_), "cuDevicePrimaryCtxRetain");
}

PrimaryContext::~PrimaryContext() {
  if (const CUresult r = api_.cu->cuDevicePrimaryCtxRelease(device_); r != CUDA_SUCCESS) {
    log::warn("cuDevicePrimaryCtxRelease failed: ", api_.errorName(r));
  }
}

ContextScope::ContextScope(const NvdecApi& api, CUcontext ctx) : api_(api) {
  api.check(api.cu->cuCtxPushCurrent(ctx), "cuCtxPushCurrent");
}

ContextScope::~ContextScope() {
  CUcontext popped = nullptr;
  if (const CUresult r = api_.cu->cuCtxPopCurrent(&popped); r != CUDA_SUCCESS) {
    log::warn("cuCtxPopCurrent failed: ", api_.errorName(r));
  }
}

}  // namespace zerohop::nvdec
