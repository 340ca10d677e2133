#pragma once
// Ingest and colour conversion on the GPU: a frame in page-locked host memory (or already in
// VRAM) becomes an NV12 / I420 frame in VRAM, with the CUDA event that says when it is ready.
// No CUDA types here: streams and events are passed as void* (cudaStream_t / cudaEvent_t).
//
// Conversions (src -> dst; dst is MemoryKind::kDevice):
//   YUYV, UYVY        -> NV12, I420  luma copied, 4:2:2 -> 4:2:0 chroma = (top + bottom + 1) >> 1
//   NV12 <-> I420                    exact rearrangement
//   RGB24, BGRx, RGBA -> NV12, I420  BT.601 / BT.709, limited / full range from dst.color (see docs/gpu.md)
//   any raw format    -> the same format (plain upload / device copy)
// YUV -> YUV keeps src.color; RGB -> YUV uses dst.color. 4:2:0 outputs need even width and height.
//
// Ordering (STYLE 5): convert() waits on src.gpu.readyEvent when set, enqueues the work on the
// stream, records an event on it and puts that event in dst.gpu.readyEvent. Consumers call
// cudaStreamWaitEvent on their own stream. The event belongs to the converter, one per destination
// buffer, re-recorded each time that buffer is written: it stays valid while the converter lives.
// Thread-safety: thread-bound (one converter per pipeline thread).

#include <cstdint>
#include <memory>

#include "zerohop/frame.hpp"

namespace zerohop {

/// How host frames reach VRAM.
enum class IngestMode : std::uint8_t {
  kCopy,      ///< one cudaMemcpy2DAsync (DMA) into a device staging buffer, then the kernel
  kZeroCopy,  ///< the kernel reads the mapped page-locked host memory over PCIe directly (kPinned only)
  kPipelinedCopy,  ///< kCopy in row bands on a second stream; each band is converted as soon as it has
                   ///< landed, so only the last band's kernel follows the upload (single-plane sources;
                   ///< others are handled as kCopy)
};
const char* ingestModeName(IngestMode mode) noexcept;

/// Whether convert() returns at once or after the GPU finished.
enum class Completion : std::uint8_t {
  kAsync,  ///< return once enqueued; Stage::kIngest/kConvert get the host time of enqueueing
  kWait,   ///< wait for the event; kConvert = completion seen by the host, kIngest = that minus the
           ///< GPU time the conversion took after the upload (from the events)
};

class GpuConverter {
 public:
  /// Creates the converter's own non-blocking stream(s) and events on `device`. `stripes` is the
  /// number of row bands kPipelinedCopy uses (ignored by the other modes). Throws Error.
  explicit GpuConverter(int device, IngestMode mode = IngestMode::kCopy, int stripes = 4);
  ~GpuConverter();  ///< synchronises its stream before freeing staging memory and events
  GpuConverter(GpuConverter&&) noexcept;
  GpuConverter& operator=(GpuConverter&&) noexcept;
  GpuConverter(const GpuConverter&) = delete;
  GpuConverter& operator=(const GpuConverter&) = delete;

  /// True when convert() can turn `src` into `dst`.
  static bool supports(PixelFormat src, PixelFormat dst) noexcept;

  /// Converts `src` (kHost: pageable copy, the slow path; kPinned; kDevice) into `dst` (kDevice, same
  /// size, pixels already allocated). Copies sequence, timestamps and keyframe from src, sets
  /// dst.color and dst.gpu, marks Stage::kIngest and Stage::kConvert (see Completion).
  /// `stream` is a cudaStream_t on the converter's device; nullptr = the converter's own stream.
  /// Throws Error(kInvalidArgument) for a pair or frame it cannot convert, Error(kDevice) when CUDA fails.
  void convert(const Frame& src, Frame& dst, void* stream = nullptr, Completion completion = Completion::kAsync);

  void* stream() const noexcept;  ///< the converter's own cudaStream_t
  int device() const noexcept;
  IngestMode mode() const noexcept;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace zerohop
