#pragma once
// Device shares in zerohopsrc: frames handed out as video/x-raw(memory:CUDAMemory) through
// GStreamer's CUDA library (gstreamer-cuda-1.0). Built from cuda_frames.cpp when the CUDA toolkit and
// gstreamer-cuda-1.0 are found, else from cuda_frames_unbuilt.cpp (a stand-in that says what the
// build lacked). This header includes no CUDA or GstCuda header.
//
// GStreamer 1.22 (Debian 12) has no way to wrap foreign device memory in a GstCudaMemory
// (gst_cuda_allocator_alloc_wrapped came in 1.24), so each frame costs ONE device-to-device copy into
// a buffer of a GstCudaBufferPool: on a stream of ours that first waits on the producer's CUDA event
// (the share's per-slot ready event), then the host waits for that copy, because 1.22's CUDA memory
// carries no stream a downstream element could wait on. The copied bytes are counted.

#include <gst/gst.h>
#include <gst/video/video.h>

#include <cstdint>
#include <memory>

#include "zerohop/pixel_format.hpp"
#include "zerohop/share.hpp"

namespace zerohop::gst {

/// The pad-template caps of the CUDA memory formats ("" when built without CUDA memory support).
const char* cudaTemplateCaps() noexcept;
/// Whether GStreamer 1.22's GstCudaMemory can hold `format` (its allocator knows NV12, I420,
/// RGBA, BGRx, RGB; YUYV and UYVY it cannot). Reentrant.
bool cudaMemoryCanHold(PixelFormat format) noexcept;

/// Copies the device frames of one share into GstCudaMemory buffers on the share device's
/// *primary* CUDA context (the context the CUDA runtime, and so the share's reader, maps the slots
/// in), wrapped as a GstCudaContext that is kept for the life of the process (buffers reference it
/// and may be freed up to exit). Thread-bound (the streaming thread); buffers it returned may be
/// freed on any thread.
class DeviceFrameCopier {
 public:
  /// For frames of `layout` on CUDA device `device`, negotiated as `caps`. Throws Error:
  /// kUnsupported (built without CUDA memory support, or a format GstCudaMemory cannot hold),
  /// kUnavailable (GStreamer's CUDA library cannot load libcuda.so.1), kDevice (a CUDA call failed).
  static std::unique_ptr<DeviceFrameCopier> open(int device, const ImageLayout& layout, GstCaps* caps);
  virtual ~DeviceFrameCopier() = default;

  /// A new buffer holding a copy of `frame` (after its ready event), with a GstVideoMeta for the
  /// pool's pitches. The copy has completed on return, so the caller may release the lease. Throws
  /// Error(kDevice) when a CUDA or pool call fails.
  virtual GstBuffer* copy(const SharedFrame& frame) = 0;
  /// The GstCudaContext (a GstObject; borrowed: it lives as long as the process).
  virtual GstObject* context() const noexcept = 0;
  /// Payload bytes copied device to device so far.
  virtual std::uint64_t bytesCopied() const noexcept = 0;
};

/// Answers a GST_QUERY_CONTEXT of type "gst.cuda.context" with `context` (a GstCudaContext from
/// DeviceFrameCopier::context() or primaryCudaContext()); false for other queries or without CUDA
/// memory support.
bool answerCudaContextQuery(GstElement* element, GstQuery* query, GstObject* context);

/// The GstCudaContext over CUDA device `device`'s primary context (process lifetime, borrowed), for
/// zerohopsink to offer upstream. Throws like DeviceFrameCopier::open.
GstObject* primaryCudaContext(int device);

/// zerohopsink's view of a GstCudaMemory buffer: its planes as a device Frame (device pointers,
/// pitches from the memory's layout, gpu.device), mapped for CUDA reads while the view lives.
/// GStreamer 1.22's CUDA memory carries no stream or event: what upstream wrote is complete when
/// it pushed the buffer (1.22's elements synchronise before they push). Thread-bound.
class CudaBufferView {
 public:
  /// Throws Error: kInvalidArgument (`buffer` holds no CUDA memory), kDevice (mapping failed),
  /// kUnsupported (built without CUDA memory support).
  static std::unique_ptr<CudaBufferView> map(GstBuffer* buffer, const GstVideoInfo& info);
  virtual ~CudaBufferView() = default;
  virtual const Frame& frame() const noexcept = 0;
  /// True when the memory lives in its device's primary context (the one a device Publisher copies
  /// in); false for memory of a context an upstream element made for itself.
  virtual bool onPrimaryContext() const noexcept = 0;
};

}  // namespace zerohop::gst
