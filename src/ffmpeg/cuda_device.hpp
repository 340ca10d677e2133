#pragma once
// The CUDA side of the FFmpeg wrapper: one AV_HWDEVICE_TYPE_CUDA device context per CUDA device,
// on the device's primary context (where zerohop's device pointers and events live) with a
// non-blocking stream of its own, and AVHWFramesContexts on it per (sw_format, size).
// Thread-safety: thread-safe (a mutex guards the caches). Ownership: the caches live for the
// process (like the dlopen'ed driver); functions returning AVBufferRef* give a new reference.

extern "C" {
#include <libavutil/pixfmt.h>
}

struct AVBufferRef;
struct AVFrame;

namespace zerohop::ffmpeg_detail {

class CudaDevice;  // opaque: the context, stream and device context of one CUDA device

/// The (cached) device for CUDA device `device`. Throws Error: kUnavailable (no libcuda.so.1),
/// kUnsupported (built without the driver loader), kDevice (a CUDA or FFmpeg call failed).
const CudaDevice& cudaDevice(int device);
/// A new reference to its AVHWDeviceContext.
AVBufferRef* deviceContextRef(const CudaDevice& dev);
/// A new reference to an initialised AV_PIX_FMT_CUDA frames context (no pool allocated up front).
AVBufferRef* framesContextRef(const CudaDevice& dev, AVPixelFormat swFormat, int width, int height);
/// The device's stream waits for `cudaEvent` (a cudaEvent_t / CUevent); no host wait.
void streamWaitEvent(const CudaDevice& dev, void* cudaEvent);
/// Waits for the work queued on the device's stream (logs a failure; never throws).
void streamSynchronize(const CudaDevice& dev) noexcept;
/// The CUstream a CUDA AVFrame's device context works on (its AVCUDADeviceContext::stream; null =
/// the legacy default stream). Throws Error(kInvalidArgument) for a frame without hw_frames_ctx.
void* cudaStreamOf(const AVFrame& frame);

}  // namespace zerohop::ffmpeg_detail
