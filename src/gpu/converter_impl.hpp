#pragma once
// Internal: GpuConverter::Impl, shared by converter.cpp (planning, copy / zero-copy / banded ingest,
// the kernels, the ready event) and signalled_ingest.cpp (kSignalledCopy's upload and its timeout).
// Thread-safety: as GpuConverter (one thread at a time).
#include <cuda_runtime_api.h>

#include <algorithm>
#include <cstdint>
#include <vector>

#include "gpu/convert_plan.hpp"
#include "gpu/cuda_check.hpp"
#include "gpu/cuda_handles.hpp"
#include "gpu/kernels.hpp"
#include "gpu/ready_events.hpp"
#include "zerohop/gpu_convert.hpp"

namespace zerohop {
namespace gpuconvert_detail {

// Rows per band when `height` rows are split into about `stripes` bands (even, at least 2).
inline std::uint32_t bandRowsFor(std::uint32_t height, int stripes) {
  const auto n = static_cast<std::uint32_t>(stripes);
  return std::max<std::uint32_t>(2, ((height + n - 1) / n + 1) & ~1u);
}

// kSignalledCopy's staging buffers, used in turn, so that a frame's upload rarely has to wait for the
// kernel that read the same buffer before it.
inline constexpr int kStagingSlots = 3;

inline kernels::PlanesOut planesOut(const Frame& dst) {
  kernels::PlanesOut out;
  for (std::uint32_t i = 0; i < planeCount(dst.format); ++i) {
    out.data[i] = dst.data[i];
    out.pitch[i] = dst.pitch[i];
  }
  return out;
}

// Bands a mode uses when the caller asks for 0 (its default).
inline int defaultStripes(IngestMode mode, int stripes) {
  if (stripes > 0) return stripes;
  return mode == IngestMode::kSignalledCopy ? 1 : 4;
}

}  // namespace gpuconvert_detail

struct GpuConverter::Impl {
  Impl(int dev, IngestMode m, int bands)
      : device(dev),
        mode(m),
        stripes(gpuconvert_detail::defaultStripes(m, bands)),
        stream(dev),
        ingestDone(dev, /*timing=*/true),
        convertDone(dev, /*timing=*/true),
        stagingFree(dev, /*timing=*/false) {
    if (mode == IngestMode::kPipelinedCopy) {
      copyStream = CudaStream(dev);
      for (int i = 0; i < stripes; ++i) bandCopied.emplace_back(dev, /*timing=*/false);
    }
    if (mode == IngestMode::kSignalledCopy) {
      flag = StreamFlag(dev);
      signalError = PinnedBuffer(dev, sizeof(std::uint32_t));
      *reinterpret_cast<volatile std::uint32_t*>(signalError.data()) = 0;
      void* mapped = nullptr;
      cuda::check(cudaHostGetDevicePointer(&mapped, signalError.data(), 0), "cudaHostGetDevicePointer",
                  "signalled ingest: the kernels report a timeout through mapped page-locked memory");
      signalErrorOnDevice = static_cast<std::uint32_t*>(mapped);
      copyStream = CudaStream(dev);
      copyUnblocked = CudaEvent(dev, /*timing=*/false);
      for (int i = 0; i < gpuconvert_detail::kStagingSlots; ++i)
        ring.push_back(StagingSlot{DeviceBuffer(), CudaEvent(dev, false)});
    }
  }
  ~Impl() {
    // Work enqueued on a caller's stream may still read the staging buffer(s).
    if (stagingStream)
      cuda::logIfFailed(cudaEventSynchronize(stagingFree.get()), "cudaEventSynchronize(staging)");
    for (const auto& slot : ring) {
      if (!slot.knownFree)
        cuda::logIfFailed(cudaEventSynchronize(slot.released.get()), "cudaEventSynchronize(slot)");
    }
  }
  Impl(const Impl&) = delete;
  Impl& operator=(const Impl&) = delete;

  // kSignalledCopy: one staging buffer of the ring. `released` is recorded on the reading kernel's
  // stream right after the frame's ready event; `knownFree` caches that the host has seen it complete
  // (asked after the previous frame was enqueued, where it costs the upload nothing).
  struct StagingSlot {
    DeviceBuffer buffer;
    CudaEvent released;
    bool knownFree = true;  // nothing read it since the host last saw `released` complete
  };

  // Members are destroyed in reverse order: events and staging go after the stream has synchronised.
  int device;
  IngestMode mode;
  int stripes;
  DeviceBuffer staging;
  std::vector<StagingSlot> ring;  // kSignalledCopy: gpuconvert_detail::kStagingSlots buffers, used in turn
  int nextSlot = 0;
  StreamFlag flag;                               // kSignalledCopy: set to each band's ticket after its copy
  PinnedBuffer signalError;                      // kSignalledCopy: a timed-out kernel writes its ticket here
  std::uint32_t* signalErrorOnDevice = nullptr;  // the same word, mapped
  std::uint32_t nextTicket = 1;                  // kSignalledCopy: tickets count up, 0 is never used
  CudaStream stream;
  CudaStream copyStream;    // kPipelinedCopy, kSignalledCopy: the bands' copies run here
  CudaEvent copyUnblocked;  // kSignalledCopy: recorded on copyStream after waits it had to make before a copy
  bool copyMayBeBlocked = false;      // such a wait may still hold copyStream (the host has not seen it pass)
  std::vector<CudaEvent> bandCopied;  // kPipelinedCopy: one per band, recorded on copyStream
  CudaEvent ingestDone;               // timing events, recorded only for Completion::kWait
  CudaEvent convertDone;
  CudaEvent stagingFree;                 // recorded after each conversion that read the staging buffer
  cudaStream_t stagingStream = nullptr;  // the stream of that conversion
  gpu_detail::ReadyEvents readyEvents{device};  // one per recent destination buffer, no timing

  void convert(const Frame& src, Frame& dst, const gpuconvert::ConvertPlan& plan, cudaStream_t s,
               Completion completion);
  std::uint8_t* stagingFor(std::size_t bytes, cudaStream_t s);
  StagingSlot& signalledUpload(const Frame& src, const Frame& dst, cudaStream_t s, Completion completion);
  void settleSignalled();
  const CudaEvent& recordReady(const Frame& dst, cudaStream_t s, Completion completion);
  void finishFrame(const Frame& src, Frame& dst, const CudaEvent& ready, Completion completion);
  void throwIfSignalTimedOut();
  void copyBand(const Frame& src, std::uint8_t* staged, std::uint32_t y0, std::uint32_t rows);
};

}  // namespace zerohop
