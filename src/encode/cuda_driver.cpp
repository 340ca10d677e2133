#include "cuda_driver.hpp"

#include <utility>

#include "zerohop/error.hpp"
#include "zerohop/log.hpp"

namespace zerohop::encode {
namespace {

struct LoadedDriver {
  SharedLibrary library;
  CudaDriver driver;
  std::string whyNot;
};

template <class Fn>
bool bind(const SharedLibrary& lib, Fn*& fn, const char* name, std::string& whyNot) {
  fn = reinterpret_cast<Fn*>(lib.symbol(name));
  if (fn == nullptr && whyNot.empty()) whyNot = std::string("libcuda.so.1 lacks ") + name + " (driver too old)";
  return fn != nullptr;
}

LoadedDriver loadOnce() {
  LoadedDriver d;
  // RTLD_NODELETE: the CUDA runtime and FFmpeg load the same library; it is never unmapped.
  d.library = SharedLibrary::open("libcuda.so.1", /*keepLoaded=*/true);
  if (!d.library) {
    d.whyNot = "libcuda.so.1 could not be loaded (" + d.library.error() + ")";
    return d;
  }
  CudaDriver& c = d.driver;
  const SharedLibrary& l = d.library;
  bool ok = bind(l, c.init, "cuInit", d.whyNot);
  ok &= bind(l, c.deviceGetCount, "cuDeviceGetCount", d.whyNot);
  ok &= bind(l, c.deviceGet, "cuDeviceGet", d.whyNot);
  ok &= bind(l, c.deviceGetName, "cuDeviceGetName", d.whyNot);
  ok &= bind(l, c.primaryCtxRetain, "cuDevicePrimaryCtxRetain", d.whyNot);
  ok &= bind(l, c.primaryCtxRelease, "cuDevicePrimaryCtxRelease", d.whyNot);
  ok &= bind(l, c.ctxPushCurrent, "cuCtxPushCurrent_v2", d.whyNot);
  ok &= bind(l, c.ctxPopCurrent, "cuCtxPopCurrent_v2", d.whyNot);
  ok &= bind(l, c.streamCreate, "cuStreamCreate", d.whyNot);
  ok &= bind(l, c.streamDestroy, "cuStreamDestroy_v2", d.whyNot);
  ok &= bind(l, c.streamWaitEvent, "cuStreamWaitEvent", d.whyNot);
  ok &= bind(l, c.streamSynchronize, "cuStreamSynchronize", d.whyNot);
  ok &= bind(l, c.memcpy2DAsync, "cuMemcpy2DAsync_v2", d.whyNot);
  ok &= bind(l, c.getErrorName, "cuGetErrorName", d.whyNot);
  if (!ok) d.library.reset();
  return d;
}

}  // namespace

const CudaDriver* CudaDriver::load(std::string* whyNot) {
  static const LoadedDriver loaded = loadOnce();  // thread-safe initialisation
  if (!loaded.library) {
    if (whyNot != nullptr) *whyNot = loaded.whyNot;
    return nullptr;
  }
  return &loaded.driver;
}

std::string CudaDriver::errorName(CUresult result) const {
  const char* name = nullptr;
  if (getErrorName != nullptr && getErrorName(result, &name) == CUDA_SUCCESS && name != nullptr) return name;
  return "CUresult " + std::to_string(static_cast<int>(result));
}

void CudaDriver::check(CUresult result, std::string_view call) const {
  if (result != CUDA_SUCCESS) throw Error(Errc::kDevice, std::string(call) + " failed: " + errorName(result));
}

PrimaryContext::PrimaryContext(const CudaDriver& driver, CUdevice device) : driver_(&driver), device_(device) {
  CUcontext ctx = nullptr;
  driver.check(driver.primaryCtxRetain(&ctx, device), "cuDevicePrimaryCtxRetain");
  ctx_ = ctx;
}

PrimaryContext::PrimaryContext(PrimaryContext&& other) noexcept { *this = std::move(other); }

PrimaryContext& PrimaryContext::operator=(PrimaryContext&& other) noexcept {
  if (this != &other) {
    reset();
    driver_ = other.driver_;
    device_ = other.device_;
    ctx_ = std::exchange(other.ctx_, nullptr);
  }
  return *this;
}

void PrimaryContext::reset() noexcept {
  if (ctx_ == nullptr) return;
  ctx_ = nullptr;
  if (const CUresult r = driver_->primaryCtxRelease(device_); r != CUDA_SUCCESS) {
    log::warn("cuDevicePrimaryCtxRelease(", device_, ") failed: ", driver_->errorName(r));
  }
}

ScopedCurrentContext::ScopedCurrentContext(const CudaDriver& driver, CUcontext ctx) : driver_(driver) {
  driver.check(driver.ctxPushCurrent(ctx), "cuCtxPushCurrent");
}

ScopedCurrentContext::~ScopedCurrentContext() {
  CUcontext popped = nullptr;
  if (const CUresult r = driver_.ctxPopCurrent(&popped); r != CUDA_SUCCESS) {
    log::warn("cuCtxPopCurrent failed: ", driver_.errorName(r));
  }
}

CuStream::CuStream(const CudaDriver& driver, CUcontext ctx) : driver_(&driver), ctx_(ctx) {
  ScopedCurrentContext current(driver, ctx);
  CUstream stream = nullptr;
  driver.check(driver.streamCreate(&stream, CU_STREAM_NON_BLOCKING), "cuStreamCreate");
  stream_ = stream;
}

CuStream::CuStream(CuStream&& other) noexcept { *this = std::move(other); }

CuStream& CuStream::operator=(CuStream&& other) noexcept {
  if (this != &other) {
    reset();
    driver_ = other.driver_;
    ctx_ = other.ctx_;
    stream_ = std::exchange(other.stream_, nullptr);
  }
  return *this;
}

void CuStream::reset() noexcept {
  if (stream_ == nullptr) return;
  CUstream stream = std::exchange(stream_, nullptr);
  // cuStreamDestroy returns at once; work still queued on the stream completes first.
  if (driver_->ctxPushCurrent(ctx_) != CUDA_SUCCESS) {
    log::warn("cuCtxPushCurrent failed while destroying a stream; leaking it");
    return;
  }
  if (const CUresult r = driver_->streamDestroy(stream); r != CUDA_SUCCESS) {
    log::warn("cuStreamDestroy failed: ", driver_->errorName(r));
  }
  CUcontext popped = nullptr;
  driver_->ctxPopCurrent(&popped);
}

}  // namespace zerohop::encode
