#pragma once
// Ingest, colour conversion, crop and scale on the GPU: a frame in page-locked host memory (or
// already in VRAM) becomes an NV12 / I420 / RGBA frame in VRAM, with the CUDA event that says when
// it is ready. No CUDA types here: streams and events are passed as void* (cudaStream_t / cudaEvent_t).
//
// Conversions at the same size (src -> dst; dst is MemoryKind::kDevice):
//   YUYV, UYVY        -> NV12, I420  luma copied, 4:2:2 -> 4:2:0 chroma = (top + bottom + 1) >> 1
//   NV12 <-> I420                    exact rearrangement
//   RGB24, BGRx, RGBA -> NV12, I420  BT.601 / BT.709, limited / full range from dst.color (see docs/gpu.md)
//   YUYV, UYVY, NV12, I420 -> RGBA   BT.601 / BT.709, limited / full range from src.color; chroma
//                                    upsampled bilinearly, chroma samples centred between their luma
//                                    pixels (the bilinear rule below at a 2:1 ratio); alpha 255
//   RGB24, BGRx       -> RGBA        reordered, alpha 255
//   any raw format    -> the same format (plain upload / device copy)
// YUV -> YUV and YUV -> RGBA keep src.color in dst; RGB -> YUV uses dst.color. 4:2:0 outputs need an
// even width and height; YUYV/UYVY sources an even width; NV12/I420 sources an even width and height.
//
// Crop and scale (ConvertOptions): `crop` selects a source rectangle (the whole frame when unset);
// when dst's size differs from the (cropped) source, the region is scaled to dst's size, bilinear with
// pixel centres aligned (libyuv kFilterBilinear / NPP linear; the edge pixel repeats beyond the edge):
//   src position of dst sample d = (d + 0.5) * srcSize / dstSize - 0.5, clamped to [0, srcSize - 1]
// applied to each plane on its own grid (luma, and chroma on the chroma grid: YUV -> NV12 / I420
// scales the chroma plane; YUV -> RGBA samples chroma at the RGBA pixel). RGB -> NV12 / I420 samples
// R, G, B at each dst pixel, chroma from the mean of each 2x2 block of those samples. One kernel reads
// the source and writes dst (no intermediate). Scaled destinations: NV12, I420, RGBA. A crop without
// scaling works for every pair (the source is read at an offset). Crops of 4:2:2 / 4:2:0 sources
// need an even x and width, and of 4:2:0 sources an even y and height.
//
// Ordering (on the GPU, through events): convert() waits on src.gpu.readyEvent when set, enqueues the work on the
// stream, records an event on it and puts that event in dst.gpu.readyEvent. Consumers call
// cudaStreamWaitEvent on their own stream. The event belongs to the converter: the 32 destination
// buffers written most recently have one each, re-recorded each time that buffer is written (a
// 33rd buffer takes over the least recently written one's event, after the work it recorded). It
// stays valid while the converter lives.
// Thread-safety: thread-bound (one converter per pipeline thread).

#include <cstdint>
#include <memory>
#include <optional>

#include "zerohop/export.h"
#include "zerohop/frame.hpp"

namespace zerohop {

/// How host frames reach VRAM.
enum class IngestMode : std::uint8_t {
  kCopy,      ///< one cudaMemcpy2DAsync (DMA) into a device staging buffer, then the kernel
  kZeroCopy,  ///< the kernel reads the mapped page-locked host memory over PCIe directly (kPinned only)
  kPipelinedCopy,  ///< kCopy in row bands on a second stream; each band is converted as soon as it has
                   ///< landed, so only the last band's kernel follows the upload (single-plane sources;
                   ///< others are handled as kCopy)
  kSignalledCopy,  ///< the upload (row bands on a second stream, default 1) sets a device flag word
                   ///< after each band; the kernel runs with no stream dependency on it and each thread
                   ///< block converts its rows once their band's ticket is in the flag, so no stream
                   ///< hand-off sits between the last byte and the kernel; 3 staging buffers used in
                   ///< turn. A block gives up after 100 ms without its band (convert() then throws
                   ///< Error(kDevice)). YUYV/UYVY -> NV12/I420 at the same size from kPinned memory;
                   ///< other conversions are handled as kCopy
};
ZEROHOP_API const char* ingestModeName(IngestMode mode) noexcept;

/// Whether convert() returns at once or after the GPU finished.
enum class Completion : std::uint8_t {
  kAsync,  ///< return once enqueued; Stage::kIngest/kConvert get the host time of enqueueing
  kWait,   ///< wait for the event; kConvert = completion seen by the host, kIngest = that minus the
           ///< GPU time the conversion took after the upload (from the events)
};

/// A rectangle of a frame, in pixels (luma pixels for YUV formats).
struct PixelRect {
  std::uint32_t x = 0;
  std::uint32_t y = 0;
  std::uint32_t width = 0;
  std::uint32_t height = 0;
};

/// What convert() does besides the format conversion. The scale factor is not here: it is the ratio
/// of dst's size to the source region's size.
struct ConvertOptions {
  std::optional<PixelRect> crop;  ///< the source region to read; unset = the whole source frame
};

class ZEROHOP_API GpuConverter {
 public:
  /// Creates the converter's own non-blocking stream(s) and events on `device`. `stripes` is the
  /// number of row bands kPipelinedCopy and kSignalledCopy use (ignored by the other modes); 0 = the
  /// mode's default (4 for kPipelinedCopy, 1 for kSignalledCopy). Throws Error.
  explicit GpuConverter(int device, IngestMode mode = IngestMode::kCopy, int stripes = 0);
  ~GpuConverter();  ///< synchronises its stream before freeing staging memory and events
  GpuConverter(GpuConverter&&) noexcept;
  GpuConverter& operator=(GpuConverter&&) noexcept;
  GpuConverter(const GpuConverter&) = delete;
  GpuConverter& operator=(const GpuConverter&) = delete;

  /// True when convert() can turn `src` into `dst` at the same size.
  static bool supports(PixelFormat src, PixelFormat dst) noexcept;
  /// True when convert() can also scale `src` into `dst` (dst NV12, I420 or RGBA, and supports()).
  static bool supportsScaling(PixelFormat src, PixelFormat dst) noexcept;

  /// Checks the request convert(src, dst, options, ...) gets, as it does, without touching the GPU
  /// (a pipeline can check its configuration before it starts). Throws Error(kInvalidArgument)
  /// saying what is wrong: a pair it cannot convert or scale, a zero size, a crop outside the source
  /// frame or odd for its subsampling, an odd size a format cannot hold, a null plane or a pitch too
  /// small, a destination not in device memory.
  static void validate(const Frame& src, const Frame& dst, const ConvertOptions& options);

  /// Converts `src` (kHost: pageable copy, the slow path; kPinned; kDevice) into `dst` (kDevice, same
  /// size, pixels already allocated; a different size only through the ConvertOptions overload).
  /// Copies sequence, timestamps and keyframe from src, sets dst.color and dst.gpu, marks
  /// Stage::kIngest and Stage::kConvert (see Completion).
  /// `stream` is a cudaStream_t on the converter's device; nullptr = the converter's own stream.
  /// Throws Error(kInvalidArgument) for a pair or frame it cannot convert, Error(kDevice) when CUDA fails
  /// (kSignalledCopy: also when an earlier frame's kernel timed out waiting for its upload; that
  /// frame's dst was left unwritten and its ready event may have fired before its upload had finished
  /// reading the source; convert() waits for the converter's uploads before it throws).
  void convert(const Frame& src, Frame& dst, void* stream = nullptr, Completion completion = Completion::kAsync);
  /// The same with a crop of `src` and/or scaling to dst's size (see the top of this header): dst may
  /// differ in size from src (without options a size mismatch is an error). Throws as validate(),
  /// and as above.
  void convert(const Frame& src, Frame& dst, const ConvertOptions& options, void* stream = nullptr,
               Completion completion = Completion::kAsync);

  void* stream() const noexcept;  ///< the converter's own cudaStream_t
  int device() const noexcept;
  IngestMode mode() const noexcept;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace zerohop
