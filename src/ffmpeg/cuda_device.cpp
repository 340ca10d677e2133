#include "cuda_device.hpp"

#include <dynlink_cuda.h>  // before hwcontext_cuda.h: defines CUDA_VERSION, so it does not want cuda.h

extern "C" {
#include <libavutil/buffer.h>
#include <libavutil/hwcontext.h>
#include <libavutil/hwcontext_cuda.h>
#include <libavutil/pixdesc.h>
}

#include <map>
#include <memory>
#include <mutex>
#include <tuple>

#include "encode/av_error.hpp"
#include "encode/cuda_driver.hpp"
#include "zerohop/error.hpp"
#include "zerohop/log.hpp"

namespace zerohop::ffmpeg_detail {

struct BufferRefDeleter {
  void operator()(AVBufferRef* ref) const noexcept { av_buffer_unref(&ref); }
};
using BufferRefPtr = std::unique_ptr<AVBufferRef, BufferRefDeleter>;

class CudaDevice {
 public:
  CudaDevice(const encode::CudaDriver& driver, int device) : driver_(driver) {
    driver.check(driver.init(0), "cuInit");
    CUdevice dev = 0;
    driver.check(driver.deviceGet(&dev, device), "cuDeviceGet(" + std::to_string(device) + ")");
    context_ = encode::PrimaryContext(driver, dev);
    stream_ = encode::CuStream(driver, context_.get());
    // Built on the primary context and our stream, not av_hwdevice_ctx_create: that makes a context
    // of its own, or with "primary_ctx" refuses a primary context the runtime already activated
    // with other flags.
    device_.reset(av_hwdevice_ctx_alloc(AV_HWDEVICE_TYPE_CUDA));
    if (!device_)
      throw Error(Errc::kDevice,
                  "av_hwdevice_ctx_alloc(AV_HWDEVICE_TYPE_CUDA): out of memory or no CUDA in FFmpeg");
    auto* hw = reinterpret_cast<AVHWDeviceContext*>(device_->data);
    auto* cuda = static_cast<AVCUDADeviceContext*>(hw->hwctx);
    cuda->cuda_ctx = context_.get();
    cuda->stream = stream_.get();
    if (const int err = av_hwdevice_ctx_init(device_.get()); err < 0) {
      encode::throwAv(Errc::kDevice, "av_hwdevice_ctx_init(CUDA device " + std::to_string(device) + ")", err);
    }
  }

  AVBufferRef* deviceRef() const { return device_.get(); }
  CUstream stream() const noexcept { return stream_.get(); }
  const encode::CudaDriver& driver() const noexcept { return driver_; }

  AVBufferRef* framesRef(AVPixelFormat sw, int width, int height) {
    std::lock_guard lock(mutex_);
    auto& slot = frames_[{sw, width, height}];
    if (!slot) {
      BufferRefPtr frames(av_hwframe_ctx_alloc(device_.get()));
      if (!frames) throw Error(Errc::kDevice, "av_hwframe_ctx_alloc: out of memory");
      auto* fc = reinterpret_cast<AVHWFramesContext*>(frames->data);
      fc->format = AV_PIX_FMT_CUDA;
      fc->sw_format = sw;
      fc->width = width;
      fc->height = height;
      fc->initial_pool_size = 0;  // the frames wrap ring slots; FFmpeg allocates only if asked for more
      if (const int err = av_hwframe_ctx_init(frames.get()); err < 0) {
        encode::throwAv(Errc::kDevice,
                        std::string("av_hwframe_ctx_init(CUDA ") + av_get_pix_fmt_name(sw) + ")", err);
      }
      slot = std::move(frames);
    }
    AVBufferRef* ref = av_buffer_ref(slot.get());
    if (!ref) throw Error(Errc::kDevice, "av_buffer_ref: out of memory");
    return ref;
  }

 private:
  const encode::CudaDriver& driver_;
  // Declared in creation order, so they go in reverse: frames contexts, device context, stream, context.
  encode::PrimaryContext context_;
  encode::CuStream stream_;
  BufferRefPtr device_;
  std::mutex mutex_;
  std::map<std::tuple<int, int, int>, BufferRefPtr> frames_;
};

namespace {

std::mutex gDevicesMutex;
// Process lifetime on purpose (never destroyed): frames may be released from FFmpeg threads up to
// exit, and tearing a CUDA context down from a static destructor races the driver's own teardown.
auto* gDevices = new std::map<int, std::unique_ptr<CudaDevice>>();

}  // namespace

const CudaDevice& cudaDevice(int device) {
  std::lock_guard lock(gDevicesMutex);
  auto& slot = (*gDevices)[device];
  if (!slot) {
    std::string whyNot;
    const encode::CudaDriver* driver = encode::CudaDriver::load(&whyNot);
    if (!driver) throw Error(Errc::kUnavailable, "CUDA AVFrames: " + whyNot);
    slot = std::make_unique<CudaDevice>(*driver, device);
  }
  return *slot;
}

AVBufferRef* deviceContextRef(const CudaDevice& dev) {
  AVBufferRef* ref = av_buffer_ref(dev.deviceRef());
  if (!ref) throw Error(Errc::kDevice, "av_buffer_ref: out of memory");
  return ref;
}

AVBufferRef* framesContextRef(const CudaDevice& dev, AVPixelFormat swFormat, int width, int height) {
  return const_cast<CudaDevice&>(dev).framesRef(swFormat, width, height);
}

void streamWaitEvent(const CudaDevice& dev, void* cudaEvent) {
  dev.driver().check(dev.driver().streamWaitEvent(dev.stream(), static_cast<CUevent>(cudaEvent), 0),
                     "cuStreamWaitEvent");
}

void streamSynchronize(const CudaDevice& dev) noexcept {
  if (const CUresult r = dev.driver().streamSynchronize(dev.stream()); r != CUDA_SUCCESS) {
    log::warn("cuStreamSynchronize before releasing a wrapped frame failed: ", dev.driver().errorName(r));
  }
}

void* cudaStreamOf(const AVFrame& frame) {
  if (!frame.hw_frames_ctx) throw Error(Errc::kInvalidArgument, "a CUDA AVFrame without hw_frames_ctx");
  const auto* fc = reinterpret_cast<const AVHWFramesContext*>(frame.hw_frames_ctx->data);
  const auto* cuda = static_cast<const AVCUDADeviceContext*>(fc->device_ctx->hwctx);
  return cuda->stream;
}

}  // namespace zerohop::ffmpeg_detail
