#pragma once
// Colour conversion and decoding of one frame into the encoder's input format (I420 or NV12).
// The CPU implementation uses libyuv and libjpeg-turbo; the GPU path implements the same interface
// with kernels and nvJPEG on device memory.
// Thread-safety: a FrameConverter is thread-bound (it keeps decoder state and scratch buffers);
// use one per pipeline thread. makeCpuConverter() is reentrant.

#include <memory>

#include "zerohop/export.h"
#include "zerohop/frame.hpp"

namespace zerohop {

/// Converts or decodes one frame into another frame's memory (both host memory on the CPU path).
/// Neither frame is owned: the caller keeps both leases alive for the duration of convert().
class ZEROHOP_API FrameConverter {
 public:
  virtual ~FrameConverter() = default;
  /// src: YUYV/UYVY/NV12/I420/RGB24/BGRx/RGBA/MJPEG; dst: I420 or NV12 of the same size (scaling
  /// may come later). Copies sequence/times/wallClockMs, sets dst.color, marks Stage::kConvert.
  ///
  /// dst.color: YUV sources keep their colour description; RGB sources become BT.601 limited range;
  /// MJPEG becomes BT.601 full range (JFIF), which the encoder must signal (EncoderConfig::color).
  ///
  /// Throws Error(kInvalidArgument) for a corrupt, truncated or mis-sized JPEG (nothing is kept from
  /// it: the next frame decodes normally) or malformed frame descriptors, and Error(kUnsupported) for
  /// an unsupported format pair, different sizes, or memory this converter cannot read (device memory
  /// on the CPU path).
  virtual void convert(const Frame& src, Frame& dst) = 0;
  /// "libyuv" or "libjpeg-turbo+libyuv" for the CPU path: the implementation that handled the last frame.
  virtual const char* name() const noexcept = 0;
};

/// The CPU converter (libyuv for raw formats, libjpeg-turbo + libyuv for MJPEG).
/// Throws Error(kUnavailable) if the JPEG decoder cannot be created.
ZEROHOP_API std::unique_ptr<FrameConverter> makeCpuConverter();

/// Scales one 4:2:0 frame into another frame's memory at that frame's size: the lower rungs of a
/// camera's ladder of renditions are the captured frame scaled down (docs/ARCHITECTURE.md,
/// "Renditions"). Neither frame is owned. The CPU path's is libyuv's box filter (makeCpuScaler); a GPU
/// path's scaler is another implementation of this interface, on device memory.
/// Thread-safety: thread-bound (an implementation may keep scratch state).
class ZEROHOP_API FrameScaler {
 public:
  virtual ~FrameScaler() = default;
  /// src: I420 or NV12; dst: I420, any even size. Copies sequence/times/wallClockMs/color. Throws
  /// Error(kUnsupported) for other formats or memory this scaler cannot read, Error(kInvalidArgument)
  /// for an odd or zero destination size.
  virtual void scale(const Frame& src, Frame& dst) = 0;
};

/// The CPU scaler (libyuv I420Scale / NV12Scale, box filter). Reentrant to create.
ZEROHOP_API std::unique_ptr<FrameScaler> makeCpuScaler();

}  // namespace zerohop
