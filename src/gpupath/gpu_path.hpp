#pragma once
// The GPU data path of `serve`: a camera frame in page-locked host memory (the camera's one kernel
// copy lands there through V4L2 USERPTR; the test camera draws there) becomes an NV12 frame in VRAM
// with one DMA and one kernel, written straight into a slot of the device-memory share ring when
// sharing, so other processes read it in place. An encoder that takes device frames (NVENC) is given
// that frame. An encoder that takes host frames (x264) also gets one copy back in page-locked host
// memory: the only trip back to the CPU, made only because no GPU encoder is in use. downloadLast()
// makes that copy of one frame on demand (serve's VP8 encode for viewers without H.264, beside NVENC).
//
// choosePath() is the one place that decides between this path and the CPU path (serve and probe
// both ask it). Builds without CUDA compile a stand-in whose choosePath() says "built without CUDA".
// Ownership: the path owns its converter, its device frames (or its share Publisher) and its
// page-locked download buffer. Frames returned by process() stay valid until the next process().
// Thread-safety: a GpuFramePath is thread-bound (the pipeline's encode thread); choosePath is reentrant.

#include <cstdint>
#include <memory>
#include <string>

#include "zerohop/export.h"
#include "zerohop/buffer_pool.hpp"
#include "zerohop/frame.hpp"
#include "zerohop/pixel_format.hpp"

namespace zerohop {

class Publisher;

/// The answer to `--gpu auto|off|N` for a source format: which path, on which device, and why.
struct GpuPathChoice {
  bool useGpu = false;
  int device = -1;
  std::string reason;  ///< one line, e.g. "CUDA device 0 (NVIDIA H200 ...) converts yuyv to NV12 in VRAM"
};

/// The device half of the decision, made once (the GPU is probed once): whether `--gpu` names a
/// usable CUDA device. choosePath(plan, format) then decides per source format without probing again.
struct GpuDevicePlan {
  bool usable = false;
  int device = -1;
  bool explicitDevice = false;  ///< `--gpu N`: what that device cannot do is an Error, not a fallback
  std::string option;           ///< the `--gpu` text
  std::string description;      ///< the device in words, when usable
  std::string reason;           ///< the CPU-path reason, when not usable
};
/// Throws Error(kInvalidArgument) for a malformed option, Error(kUnavailable/kUnsupported) for an
/// explicitly requested device that does not work (or a build without CUDA).
ZEROHOP_API GpuDevicePlan planGpuDevice(const std::string& gpuOption);
/// As above; with "auto", device `autoDevice` (placeCameras' choice, src/gpupath/gpu_placement.hpp) is
/// probed instead of the first (-1: the first). An unusable one falls back to the CPU path, as auto does.
ZEROHOP_API GpuDevicePlan planGpuDevice(const std::string& gpuOption, int autoDevice);
/// The format half: the GPU path when the plan's device converts (or, for MJPEG, nvJPEG decodes)
/// `sourceFormat`. Throws like choosePath below.
ZEROHOP_API GpuPathChoice choosePath(const GpuDevicePlan& plan, PixelFormat sourceFormat);

/// Decides the path (planGpuDevice + choosePath(plan, format)). `gpuOption` is "auto" (the GPU when a CUDA device works and converts this
/// format), "off", or a device number (then a device that does not work is an Error, not a fallback).
/// Throws Error(kInvalidArgument) for a malformed option, Error(kUnavailable) for an unusable
/// explicitly requested device or format.
ZEROHOP_API GpuPathChoice choosePath(const std::string& gpuOption, PixelFormat sourceFormat);

/// The allocator a source should fill on the GPU path: page-locked host memory on `device`, so the
/// camera's one kernel copy (V4L2 USERPTR) lands where the GPU reads it by DMA. Throws Error.
ZEROHOP_API std::unique_ptr<FrameAllocator> makeIngestAllocator(int device);
/// Device memory on `device` (VRAM) for frames an NVENC session reads, e.g. a lower rung's scaled
/// picture. Throws Error (without CUDA: kUnsupported).
ZEROHOP_API std::unique_ptr<FrameAllocator> makeVramAllocator(int device);

struct GpuPathConfig {
  int device = 0;
  PixelFormat sourceFormat = PixelFormat::kUnknown;
  std::uint32_t width = 0;
  std::uint32_t height = 0;
  /// Non-empty (and `share` null): every frame is converted straight into a slot of a device-memory
  /// share ring NAME the path creates.
  std::string shareName;
  std::uint32_t shareSlots = 8;
  std::string shareDirectory;  ///< empty: the default share directory of this user
  /// Also copy each NV12 frame back into page-locked host memory (for an encoder that takes host frames).
  /// Without it, downloadLast() makes that copy of a frame on demand (serve: while a VP8 viewer watches).
  bool hostCopy = false;
  /// Non-null: every frame is converted straight into a slot of this device-memory share instead,
  /// which the caller owns (keeps alive longer than the path) and created with deviceLayout()'s layout.
  Publisher* share = nullptr;
  /// MJPEG only: decode through the process's JpegBatcher for `device` (one batched nvJPEG call for
  /// the frames several cameras hand in together; src/gpu/jpeg_batcher.hpp) instead of a decoder of
  /// this path's own. More cameras per GPU; each frame is decoded whole (no restart strips), so a
  /// single camera's frame takes longer.
  bool batchJpeg = false;
};

struct GpuPathOutput {
  const Frame* device = nullptr;  ///< NV12 in VRAM; gpu.readyEvent says when it is written
  const Frame* host = nullptr;    ///< NV12 in page-locked host memory, complete; nullptr without hostCopy
};

class ZEROHOP_API GpuFramePath {
 public:
  /// The layout of the NV12 frames it writes in VRAM (what a caller's share must hold).
  static ImageLayout deviceLayout(std::uint32_t width, std::uint32_t height);
  /// Creates the converter, the device frames or the device share ring, and the download buffer.
  /// Throws Error (kInvalidArgument for a format the GPU path does not convert, kDevice/kUnavailable
  /// from CUDA or the share ring).
  explicit GpuFramePath(const GpuPathConfig& config);
  ~GpuFramePath();
  GpuFramePath(const GpuFramePath&) = delete;
  GpuFramePath& operator=(const GpuFramePath&) = delete;

  /// Converts one source frame (kPinned, kDevice, or kHost: slow pageable upload) to NV12 in VRAM,
  /// publishes it when sharing, and downloads it when hostCopy. Keeps sequence and stage times;
  /// Stage::kIngest/kConvert mark enqueueing, and with hostCopy kConvert marks the download's end.
  /// Throws Error; a failed frame fails alone.
  GpuPathOutput process(const Frame& src);
  /// The NV12 frame the last process() wrote, in page-locked host memory, complete: with hostCopy the
  /// copy process() made; without, one download of it now (its page-locked buffer is allocated on the
  /// first call, so a path never asked costs nothing). Keeps sequence, colour and stage times (kConvert
  /// is not marked again). Valid until the next process() or downloadLast(). Throws Error
  /// (kInvalidArgument before a frame or after a failed one; kDevice from CUDA).
  const Frame& downloadLast();

  /// "GPU path on CUDA device 0: yuyv -> NV12 in VRAM (copy ingest); device share 'cam0'; host copy for x264"
  std::string describe() const;
  std::uint32_t shareReaders() const;  ///< readers attached to the device share (0 without one)
  std::string shareSocketPath() const;  ///< empty without a share

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace zerohop
