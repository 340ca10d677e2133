// Device frames as GstCudaMemory (cuda_frames.hpp), with GStreamer 1.22's CUDA library: one
// device-to-device copy per frame into a GstCudaBufferPool buffer on the share device's primary context.
#include "cuda_frames.hpp"

#include <cuda.h>
#include <cuda_runtime_api.h>
#include <gst/cuda/gstcudabufferpool.h>
#include <gst/cuda/gstcudacontext.h>
#include <gst/cuda/gstcudaloader.h>
#include <gst/cuda/gstcudamemory.h>
#include <gst/cuda/gstcudautils.h>

#include <atomic>
#include <map>
#include <mutex>
#include <string>

#include "gpu/cuda_check.hpp"
#include "gpu/cuda_handles.hpp"
#include "gpu/driver_entry.hpp"
#include "zerohop/error.hpp"

namespace zerohop::gst {

const char* cudaTemplateCaps() noexcept {
  return GST_VIDEO_CAPS_MAKE_WITH_FEATURES(GST_CAPS_FEATURE_MEMORY_CUDA_MEMORY, "{ NV12, I420, RGBA, BGRx, RGB }");
}

bool cudaMemoryCanHold(PixelFormat format) noexcept {
  switch (format) {
    case PixelFormat::kNV12:
    case PixelFormat::kI420:
    case PixelFormat::kRGBA:
    case PixelFormat::kBGRx:
    case PixelFormat::kRGB24:
      return true;
    default:
      return false;
  }
}

bool answerCudaContextQuery(GstElement* element, GstQuery* query, GstObject* context) {
  if (!context || GST_QUERY_TYPE(query) != GST_QUERY_CONTEXT) return false;
  return gst_cuda_handle_context_query(element, query, GST_CUDA_CONTEXT(context));
}

namespace {

void checkCu(CUresult status, const char* call) {
  if (status != CUDA_SUCCESS) throw Error(Errc::kDevice, std::string(call) + ": " + cuda::driverErrorName(status));
}

// The primary context of `device`, retained, wrapped as a GstCudaContext; one per device for the
// life of the process (never released: GstCudaMemory keeps a reference to its context, and buffers
// may be freed from any thread up to exit).
GstCudaContext* primaryContextOf(int device) {
  static std::mutex mutex;
  static auto* contexts = new std::map<int, GstCudaContext*>();
  std::lock_guard lock(mutex);
  if (auto it = contexts->find(device); it != contexts->end()) return it->second;
  if (!gst_cuda_load_library()) {
    throw Error(Errc::kUnavailable,
                "GStreamer's CUDA library (libgstcuda-1.0) could not load libcuda.so.1: no NVIDIA driver here");
  }
  const auto deviceGet = reinterpret_cast<decltype(&cuDeviceGet)>(cuda::driverEntryPoint("cuDeviceGet"));
  const auto retain =
      reinterpret_cast<decltype(&cuDevicePrimaryCtxRetain)>(cuda::driverEntryPoint("cuDevicePrimaryCtxRetain"));
  if (!deviceGet || !retain) {
    throw Error(Errc::kUnavailable, "the CUDA driver has no cuDeviceGet / cuDevicePrimaryCtxRetain");
  }
  CUdevice dev = 0;
  checkCu(deviceGet(&dev, device), "cuDeviceGet");
  CUcontext ctx = nullptr;
  checkCu(retain(&ctx, dev), "cuDevicePrimaryCtxRetain");
  GstCudaContext* wrapped = gst_cuda_context_new_wrapped(ctx, dev);
  if (!wrapped) {
    throw Error(Errc::kDevice, "gst_cuda_context_new_wrapped(primary context of CUDA device " +
                                   std::to_string(device) + ") failed (GST_DEBUG=cudacontext:5 says why)");
  }
  contexts->emplace(device, wrapped);
  return wrapped;
}

struct BufferUnref {
  void operator()(GstBuffer* b) const noexcept { gst_buffer_unref(b); }
};
using BufferPtr = std::unique_ptr<GstBuffer, BufferUnref>;

// A GstMemory mapped for CUDA writes for the scope.
class CudaMapping {
 public:
  explicit CudaMapping(GstMemory* mem) : mem_(mem) {
    if (!gst_memory_map(mem_, &map_, static_cast<GstMapFlags>(GST_MAP_WRITE | GST_MAP_CUDA))) {
      throw Error(Errc::kDevice, "gst_memory_map(GST_MAP_WRITE | GST_MAP_CUDA) of a pool buffer failed");
    }
  }
  ~CudaMapping() { gst_memory_unmap(mem_, &map_); }
  CudaMapping(const CudaMapping&) = delete;
  CudaMapping& operator=(const CudaMapping&) = delete;
  std::uint8_t* device() const noexcept { return static_cast<std::uint8_t*>(map_.data); }

 private:
  GstMemory* mem_;
  GstMapInfo map_{};
};

class CudaPoolCopier final : public DeviceFrameCopier {
 public:
  CudaPoolCopier(int device, const ImageLayout& layout, GstCaps* caps)
      : device_(device), layout_(layout), context_(primaryContextOf(device)), stream_(device) {
    gst_cuda_memory_init_once();
    pool_ = gst_cuda_buffer_pool_new(context_);
    GstVideoInfo info;
    if (!gst_video_info_from_caps(&info, caps)) throw Error(Errc::kInvalidArgument, "caps without video info");
    GstStructure* config = gst_buffer_pool_get_config(pool_);
    // min 2, max 0: the pool grows rather than block the streaming thread when downstream holds buffers.
    gst_buffer_pool_config_set_params(config, caps, static_cast<guint>(GST_VIDEO_INFO_SIZE(&info)), 2, 0);
    gst_buffer_pool_config_add_option(config, GST_BUFFER_POOL_OPTION_VIDEO_META);
    if (!gst_buffer_pool_set_config(pool_, config) || !gst_buffer_pool_set_active(pool_, TRUE)) {
      gst_object_unref(pool_);
      throw Error(Errc::kDevice, "a GstCudaBufferPool for these caps could not be set up");
    }
  }
  ~CudaPoolCopier() override {
    gst_buffer_pool_set_active(pool_, FALSE);  // buffers still downstream are freed when they return
    gst_object_unref(pool_);
  }

  GstBuffer* copy(const SharedFrame& shared) override {
    const Frame& f = shared.frame();
    GstBuffer* raw = nullptr;
    if (gst_buffer_pool_acquire_buffer(pool_, &raw, nullptr) != GST_FLOW_OK || !raw) {
      throw Error(Errc::kDevice, "gst_buffer_pool_acquire_buffer from the CUDA pool failed");
    }
    BufferPtr buf(raw);
    GstMemory* mem = gst_buffer_peek_memory(buf.get(), 0);
    if (!gst_is_cuda_memory(mem)) throw Error(Errc::kDevice, "the CUDA pool returned a buffer of other memory");
    const GstVideoInfo& dstInfo = GST_CUDA_MEMORY_CAST(mem)->info;  // the pool's pitched layout
    std::uint64_t bytes = 0;
    {
      CudaMapping map(mem);
      cuda::DeviceGuard guard(device_);
      // GPU ordering travels with the frame: our stream waits for the producer's write of the slot.
      if (f.gpu.readyEvent) {
        cuda::check(cudaStreamWaitEvent(stream_.get(), static_cast<cudaEvent_t>(f.gpu.readyEvent), 0),
                    "cudaStreamWaitEvent(the frame's ready event)");
      }
      for (std::uint32_t p = 0; p < layout_.planeCount; ++p) {
        const auto& plane = layout_.planes[p];
        cuda::check(cudaMemcpy2DAsync(map.device() + GST_VIDEO_INFO_PLANE_OFFSET(&dstInfo, p),
                                      static_cast<std::size_t>(GST_VIDEO_INFO_PLANE_STRIDE(&dstInfo, p)), f.data[p],
                                      f.pitch[p], plane.widthBytes, plane.rows, cudaMemcpyDeviceToDevice,
                                      stream_.get()),
                    "cudaMemcpy2DAsync(slot -> GstCudaMemory)");
        bytes += std::uint64_t{plane.widthBytes} * plane.rows;
      }
      // GStreamer 1.22's CUDA memory has no stream to hand on: the copy completes before the push.
      stream_.synchronize();
    }
    bytesCopied_ += bytes;
    return buf.release();
  }

  GstObject* context() const noexcept override { return GST_OBJECT(context_); }
  std::uint64_t bytesCopied() const noexcept override { return bytesCopied_.load(); }

 private:
  int device_;
  ImageLayout layout_;
  GstCudaContext* context_;  // process lifetime (primaryContextOf)
  CudaStream stream_;
  GstBufferPool* pool_ = nullptr;
  std::atomic<std::uint64_t> bytesCopied_{0};
};

class CudaMemoryView final : public CudaBufferView {
 public:
  CudaMemoryView(GstBuffer* buffer, const GstVideoInfo& info) {
    if (gst_buffer_n_memory(buffer) != 1 || !gst_is_cuda_memory(gst_buffer_peek_memory(buffer, 0))) {
      throw Error(Errc::kInvalidArgument, "a buffer with CUDA caps holds no single GstCudaMemory");
    }
    mem_ = gst_buffer_peek_memory(buffer, 0);
    auto* cmem = GST_CUDA_MEMORY_CAST(mem_);
    guint device = 0;
    g_object_get(cmem->context, "cuda-device-id", &device, nullptr);
    primary_ = gst_cuda_context_get_handle(cmem->context) ==
               gst_cuda_context_get_handle(primaryContextOf(static_cast<int>(device)));
    if (!gst_memory_map(mem_, &map_, static_cast<GstMapFlags>(GST_MAP_READ | GST_MAP_CUDA))) {
      throw Error(Errc::kDevice, "gst_memory_map(GST_MAP_READ | GST_MAP_CUDA) of an upstream buffer failed");
    }
    // The plane layout: the buffer's GstVideoMeta where upstream set one, else the memory's own.
    const GstVideoMeta* meta = gst_buffer_get_video_meta(buffer);
    auto* base = static_cast<std::uint8_t*>(map_.data);
    frame_.memory = MemoryKind::kDevice;
    frame_.width = static_cast<std::uint32_t>(GST_VIDEO_INFO_WIDTH(&info));
    frame_.height = static_cast<std::uint32_t>(GST_VIDEO_INFO_HEIGHT(&info));
    frame_.planeCount = GST_VIDEO_INFO_N_PLANES(&info);
    for (std::uint32_t p = 0; p < frame_.planeCount && p < kMaxPlanes; ++p) {
      const gsize offset = meta ? meta->offset[p] : GST_VIDEO_INFO_PLANE_OFFSET(&cmem->info, p);
      const gint stride = meta ? meta->stride[p] : GST_VIDEO_INFO_PLANE_STRIDE(&cmem->info, p);
      frame_.data[p] = base + offset;
      frame_.pitch[p] = static_cast<std::uint32_t>(stride);
    }
    frame_.gpu.device = static_cast<int>(device);
  }
  ~CudaMemoryView() override { gst_memory_unmap(mem_, &map_); }
  CudaMemoryView(const CudaMemoryView&) = delete;
  CudaMemoryView& operator=(const CudaMemoryView&) = delete;

  const Frame& frame() const noexcept override { return frame_; }
  bool onPrimaryContext() const noexcept override { return primary_; }

 private:
  GstMemory* mem_ = nullptr;
  GstMapInfo map_{};
  Frame frame_{};
  bool primary_ = false;
};

}  // namespace

GstObject* primaryCudaContext(int device) {
  return GST_OBJECT(primaryContextOf(device));
}

std::unique_ptr<CudaBufferView> CudaBufferView::map(GstBuffer* buffer, const GstVideoInfo& info) {
  return std::make_unique<CudaMemoryView>(buffer, info);
}

std::unique_ptr<DeviceFrameCopier> DeviceFrameCopier::open(int device, const ImageLayout& layout, GstCaps* caps) {
  if (!cudaMemoryCanHold(layout.format)) {
    throw Error(Errc::kUnsupported, "GStreamer 1.22's CUDA memory cannot hold " +
                                        std::string(formatName(layout.format)) +
                                        " frames (it knows NV12, I420, RGBA, BGRx, RGB)");
  }
  return std::make_unique<CudaPoolCopier>(device, layout, caps);
}

}  // namespace zerohop::gst
