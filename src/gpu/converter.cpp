// GpuConverter: ingest (DMA copy, zero-copy, banded or signalled copy) + colour conversion, with the
// ready event travelling in the destination frame.
#include <cuda_runtime_api.h>

#include <algorithm>
#include <string>
#include <vector>

#include "gpu/color_coefficients.hpp"
#include "gpu/convert_plan.hpp"
#include "gpu/cuda_check.hpp"
#include "gpu/cuda_handles.hpp"
#include "gpu/converter_impl.hpp"
#include "gpu/kernels.hpp"
#include "zerohop/clock.hpp"
#include "zerohop/error.hpp"
#include "zerohop/gpu_convert.hpp"

namespace zerohop {
using gpuconvert_detail::bandRowsFor;
using gpuconvert_detail::planesOut;

namespace {

using cuda::check;
using gpuconvert::frameText;
using gpuconvert::is420;
using gpuconvert::isPacked422;
using gpuconvert::isRaw;
using gpuconvert::isRgb;
using gpuconvert::PlaneShape;
using gpuconvert::planeShape;
using gpuconvert::planeSpan;

kernels::SampleIn sampleIn(PixelFormat f) {
  switch (f) {
    case PixelFormat::kYUYV: return kernels::SampleIn::kYUYV;
    case PixelFormat::kUYVY: return kernels::SampleIn::kUYVY;
    case PixelFormat::kNV12: return kernels::SampleIn::kNV12;
    case PixelFormat::kI420: return kernels::SampleIn::kI420;
    case PixelFormat::kRGB24: return kernels::SampleIn::kRGB24;
    case PixelFormat::kBGRx: return kernels::SampleIn::kBGRx;
    default: return kernels::SampleIn::kRGBA;
  }
}
kernels::SampleOut sampleOut(PixelFormat f) {
  if (f == PixelFormat::kNV12) return kernels::SampleOut::kNV12;
  if (f == PixelFormat::kI420) return kernels::SampleOut::kI420;
  return kernels::SampleOut::kRGBA;
}

std::size_t alignUp(std::size_t v, std::size_t a) { return (v + a - 1) / a * a; }

}  // namespace

const char* ingestModeName(IngestMode mode) noexcept {
  switch (mode) {
    case IngestMode::kCopy: return "copy";
    case IngestMode::kZeroCopy: return "zero-copy";
    case IngestMode::kPipelinedCopy: return "pipelined-copy";
    case IngestMode::kSignalledCopy: return "signalled-copy";
  }
  return "unknown";
}


std::uint8_t* GpuConverter::Impl::stagingFor(std::size_t bytes, cudaStream_t s) {
  if (staging.size() < bytes) {
    if (stagingStream) stagingFree.synchronize();  // the old buffer may still be read by a kernel
    staging.reset();
    staging = DeviceBuffer(device, bytes);
  } else if (stagingStream && !(stagingStream == s && s == stream.get())) {
    // The previous conversion may have run on another stream: it must have finished reading the
    // buffer. Only on the converter's own stream does stream order already guarantee that (a
    // caller's stream handle may have been destroyed and its value reused).
    check(cudaStreamWaitEvent(s, stagingFree.get(), 0), "cudaStreamWaitEvent(staging)");
  }
  return staging.data();
}

// Rows [y0, y0 + rows) of single-plane `src` into the staging buffer `staged` (same pitch), on copyStream.
void GpuConverter::Impl::copyBand(const Frame& src, std::uint8_t* staged, std::uint32_t y0, std::uint32_t rows) {
  const std::uint32_t pitch = src.pitch[0];
  const std::size_t offset = std::size_t(y0) * pitch;
  const std::uint32_t widthBytes = planeShape(src.format, 0, src.width, rows).widthBytes;
  const std::size_t span = planeSpan(pitch, PlaneShape{widthBytes, rows});
  check(cudaMemcpyAsync(staged + offset, src.data[0] + offset, span, cudaMemcpyDefault, copyStream.get()),
        "cudaMemcpyAsync", std::string(memoryKindName(src.memory)) + " -> device staging, band of " +
                               std::to_string(span) + " bytes");
}


// After the frame's last kernel on `s`: the timing event (kWait) and the destination's ready event.
const CudaEvent& GpuConverter::Impl::recordReady(const Frame& dst, cudaStream_t s, Completion completion) {
  if (completion == Completion::kWait) convertDone.record(s);
  return readyEvents.record(dst.data[0], s);
}

// The frame's metadata, ready event and stage times; with kWait, waits for the GPU.
void GpuConverter::Impl::finishFrame(const Frame& src, Frame& dst, const CudaEvent& ready, Completion completion) {
  dst.sequence = src.sequence;
  dst.wallClockMs = src.wallClockMs;
  dst.keyframe = src.keyframe;
  dst.times = src.times;
  if (!isRgb(src.format)) dst.color = src.color;  // YUV -> YUV / RGBA: the source's description
  dst.gpu.readyEvent = ready.get();
  dst.gpu.device = device;
  if (completion == Completion::kWait) {
    ready.synchronize();
    throwIfSignalTimedOut();
    const std::int64_t now = monotonicNs();
    const auto convertNs =
        static_cast<std::int64_t>(static_cast<double>(convertDone.elapsedMsSince(ingestDone)) * 1e6);
    dst.times.mark(Stage::kIngest, now - convertNs);
    dst.times.mark(Stage::kConvert, now);
  } else {
    const std::int64_t now = monotonicNs();
    dst.times.mark(Stage::kIngest, now);
    dst.times.mark(Stage::kConvert, now);
  }
}

void GpuConverter::Impl::convert(const Frame& original, Frame& dst, const gpuconvert::ConvertPlan& plan,
                                 cudaStream_t s, Completion completion) {
  if (mode == IngestMode::kZeroCopy && original.memory == MemoryKind::kHost) {
    throw Error(Errc::kInvalidArgument,
                "GpuConverter: zero-copy ingest needs page-locked memory (MemoryKind::kPinned), got " +
                    frameText(original));
  }
  throwIfSignalTimedOut();
  const Frame& src = plan.source;  // the crop rectangle's view of `original` (or `original`)
  const std::uint32_t srcPlanes = planeCount(src.format);
  const std::uint32_t dstPlanes = planeCount(dst.format);

  cuda::DeviceGuard guard(device);
  if (mode == IngestMode::kSignalledCopy && src.memory == MemoryKind::kPinned && !plan.resample &&
      isPacked422(src.format) && is420(dst.format)) {
    StagingSlot& slot = signalledUpload(src, dst, s, completion);  // waits for the source's event itself
    const CudaEvent& ready = recordReady(dst, s, completion);
    slot.released.record(s);  // after `ready`, so that consumers' event is not delayed by it
    settleSignalled();
    finishFrame(src, dst, ready, completion);
    return;
  }
  if (src.gpu.readyEvent) {
    check(cudaStreamWaitEvent(s, static_cast<cudaEvent_t>(src.gpu.readyEvent), 0), "cudaStreamWaitEvent(source)");
  }
  const std::uint32_t w = src.width, h = src.height;
  auto copyPlane = [&](std::uint8_t* to, std::uint32_t toPitch, const std::uint8_t* from, std::uint32_t fromPitch,
                       const PlaneShape& shape) {
    check(cudaMemcpy2DAsync(to, toPitch, from, fromPitch, shape.widthBytes, shape.rows, cudaMemcpyDefault, s),
          "cudaMemcpy2DAsync", std::string(memoryKindName(src.memory)) + " -> device, " +
                                   std::to_string(shape.widthBytes) + " x " + std::to_string(shape.rows));
  };

  kernels::PlanesIn in;
  const kernels::PlanesOut out = planesOut(dst);
  bool usedStaging = false;
  bool launched = false;
  const auto out420 = dst.format == PixelFormat::kNV12 ? kernels::Out420::kNV12 : kernels::Out420::kI420;
  // Launches the conversion kernel on `rows` rows (all, or one band) of the planes given.
  auto launch = [&](const kernels::PlanesIn& kin, const kernels::PlanesOut& kout, std::uint32_t rows) {
    if (plan.resample) {
      const kernels::ResampleSize size{w, h, dst.width, dst.height};
      kernels::resample(sampleIn(src.format), sampleOut(dst.format), kin, kout, size,
                        rgbToYuvCoefficients(dst.color), yuvToRgbCoefficients(src.color), s);
    } else if (isPacked422(src.format)) {
      kernels::packed422To420(src.format == PixelFormat::kYUYV ? kernels::Packed422::kYUYV : kernels::Packed422::kUYVY,
                              out420, kin, kout, w, rows, s);
    } else if (isRgb(src.format)) {
      const auto layout = src.format == PixelFormat::kRGB24  ? kernels::RgbLayout::kRGB24
                          : src.format == PixelFormat::kBGRx ? kernels::RgbLayout::kBGRx
                                                             : kernels::RgbLayout::kRGBA;
      kernels::rgbTo420(layout, out420, kin, kout, w, rows, rgbToYuvCoefficients(dst.color), s);
    } else if (src.format == PixelFormat::kNV12) {
      kernels::nv12ChromaToI420(kin, kout, w, rows, s);
    } else {
      kernels::i420ChromaToNv12(kin, kout, w, rows, s);
    }
  };

  if (src.format == dst.format && !plan.resample) {
    // Plain upload / device copy: one DMA per plane straight into the destination.
    for (std::uint32_t i = 0; i < srcPlanes; ++i) {
      copyPlane(dst.data[i], dst.pitch[i], src.data[i], src.pitch[i], planeShape(src.format, i, w, h));
    }
  } else {
    // Planes the kernel reads. Luma of a 4:2:0 -> 4:2:0 conversion goes straight to the destination.
    std::uint32_t first = 0;
    if (is420(src.format) && !plan.resample) {
      copyPlane(dst.data[0], dst.pitch[0], src.data[0], src.pitch[0], planeShape(src.format, 0, w, h));
      first = 1;
    }
    if (src.memory == MemoryKind::kDevice) {
      for (std::uint32_t i = first; i < srcPlanes; ++i) {
        in.data[i] = src.data[i];
        in.pitch[i] = src.pitch[i];
      }
    } else if (mode == IngestMode::kZeroCopy) {
      for (std::uint32_t i = first; i < srcPlanes; ++i) {
        void* mapped = nullptr;
        check(cudaHostGetDevicePointer(&mapped, src.data[i], 0), "cudaHostGetDevicePointer",
              "zero-copy ingest needs memory from makePinnedAllocator or a mapped HostRegistration");
        in.data[i] = static_cast<const std::uint8_t*>(mapped);
        in.pitch[i] = src.pitch[i];
      }
    } else if (mode == IngestMode::kPipelinedCopy && !plan.resample && srcPlanes == 1 && stripes > 1 &&
               h >= 4) {
      // Row bands: all copies go back to back on copyStream, each followed by an event; the
      // kernel for band k waits only for copy k, so conversion overlaps the rest of the upload and
      // only the last band's kernel is left after the last byte lands.
      const PlaneShape shape = planeShape(src.format, 0, w, h);
      const std::uint32_t pitch = src.pitch[0];
      std::uint8_t* base = stagingFor(planeSpan(pitch, shape), copyStream.get());
      if (src.gpu.readyEvent) {
        check(cudaStreamWaitEvent(copyStream.get(), static_cast<cudaEvent_t>(src.gpu.readyEvent), 0),
              "cudaStreamWaitEvent(source, copy stream)");
      }
      const std::uint32_t bandRows = bandRowsFor(h, stripes);
      std::size_t band = 0;
      for (std::uint32_t y0 = 0; y0 < h; y0 += bandRows, ++band) {
        copyBand(src, base, y0, std::min(bandRows, h - y0));
        bandCopied[band].record(copyStream.get());
      }
      if (completion == Completion::kWait) ingestDone.record(copyStream.get());
      band = 0;
      for (std::uint32_t y0 = 0; y0 < h; y0 += bandRows, ++band) {
        const std::uint32_t rows = std::min(bandRows, h - y0);
        check(cudaStreamWaitEvent(s, bandCopied[band].get(), 0), "cudaStreamWaitEvent(band)");
        kernels::PlanesIn bandIn;
        bandIn.data[0] = base + std::size_t(y0) * pitch;
        bandIn.pitch[0] = pitch;
        kernels::PlanesOut bandOut = out;
        bandOut.data[0] = out.data[0] + std::size_t(y0) * out.pitch[0];
        for (std::uint32_t i = 1; i < dstPlanes; ++i) bandOut.data[i] = out.data[i] + std::size_t(y0 / 2) * out.pitch[i];
        launch(bandIn, bandOut, rows);
      }
      usedStaging = true;
      launched = true;
    } else {
      // One linear DMA per plane into staging, keeping the source pitch (a contiguous copy).
      std::size_t offsets[kMaxPlanes] = {};
      std::size_t total = 0;
      for (std::uint32_t i = first; i < srcPlanes; ++i) {
        offsets[i] = total;
        total = alignUp(total + planeSpan(src.pitch[i], planeShape(src.format, i, w, h)), 256);
      }
      std::uint8_t* base = stagingFor(total, s);
      for (std::uint32_t i = first; i < srcPlanes; ++i) {
        const std::size_t span = planeSpan(src.pitch[i], planeShape(src.format, i, w, h));
        check(cudaMemcpyAsync(base + offsets[i], src.data[i], span, cudaMemcpyDefault, s), "cudaMemcpyAsync",
              std::string(memoryKindName(src.memory)) + " -> device staging, " + std::to_string(span) + " bytes");
        in.data[i] = base + offsets[i];
        in.pitch[i] = src.pitch[i];
      }
      usedStaging = true;
    }
  }
  const bool timed = completion == Completion::kWait;
  if (!launched) {
    if (timed) ingestDone.record(s);
    if (src.format != dst.format || plan.resample) launch(in, out, h);
  }
  const CudaEvent& ready = recordReady(dst, s, completion);
  if (usedStaging) {  // after `ready`, so that consumers' event is not delayed by it
    stagingFree.record(s);
    stagingStream = s;
  }
  finishFrame(src, dst, ready, completion);
}

GpuConverter::GpuConverter(int device, IngestMode mode, int stripes)
    : impl_(std::make_unique<Impl>(device, mode, stripes)) {}
GpuConverter::~GpuConverter() = default;
GpuConverter::GpuConverter(GpuConverter&&) noexcept = default;
GpuConverter& GpuConverter::operator=(GpuConverter&&) noexcept = default;

bool GpuConverter::supports(PixelFormat src, PixelFormat dst) noexcept {
  if (!isRaw(src) || !isRaw(dst)) return false;
  return src == dst || is420(dst) || dst == PixelFormat::kRGBA;
}

bool GpuConverter::supportsScaling(PixelFormat src, PixelFormat dst) noexcept {
  return supports(src, dst) && (is420(dst) || dst == PixelFormat::kRGBA);
}

void GpuConverter::validate(const Frame& src, const Frame& dst, const ConvertOptions& options) {
  (void)gpuconvert::planConversion(src, dst, options, /*allowScale=*/true);
}

void GpuConverter::convert(const Frame& src, Frame& dst, void* stream, Completion completion) {
  cudaStream_t s = stream ? static_cast<cudaStream_t>(stream) : impl_->stream.get();
  impl_->convert(src, dst, gpuconvert::planConversion(src, dst, {}, /*allowScale=*/false), s, completion);
}

void GpuConverter::convert(const Frame& src, Frame& dst, const ConvertOptions& options, void* stream,
                           Completion completion) {
  cudaStream_t s = stream ? static_cast<cudaStream_t>(stream) : impl_->stream.get();
  impl_->convert(src, dst, gpuconvert::planConversion(src, dst, options, /*allowScale=*/true), s, completion);
}

void* GpuConverter::stream() const noexcept { return impl_->stream.get(); }
int GpuConverter::device() const noexcept { return impl_->device; }
IngestMode GpuConverter::mode() const noexcept { return impl_->mode; }

}  // namespace zerohop
