// GpuConverter's kSignalledCopy ingest: the upload on a second stream with a flag per band, the
// kernel that waits for it on the GPU, and the report of a kernel that gave up (design: docs/gpu.md).
#include <cuda_runtime_api.h>

#include <string>

#include "gpu/converter_impl.hpp"
#include "zerohop/error.hpp"

namespace zerohop {

using cuda::check;
using gpuconvert::planeShape;
using gpuconvert::planeSpan;
using gpuconvert_detail::bandRowsFor;
using gpuconvert_detail::kStagingSlots;
using gpuconvert_detail::planesOut;

void GpuConverter::Impl::throwIfSignalTimedOut() {
  if (!signalError.data()) return;
  auto* word = reinterpret_cast<volatile std::uint32_t*>(signalError.data());
  const std::uint32_t ticket = *word;
  if (ticket == 0) return;
  *word = 0;
  // That frame's ready event may have fired before its upload ended (see signalledUpload): once this
  // has thrown, no upload the converter enqueued still reads a source or a staging buffer.
  copyStream.synchronize();
  throw Error(Errc::kDevice, "GpuConverter: signalled ingest: a conversion kernel waited " +
                                 std::to_string(kernels::kSignalTimeoutNs / 1000000) +
                                 " ms for the upload of its rows (ticket " + std::to_string(ticket) +
                                 ") and gave up; that frame's destination was not written");
}

// kSignalledCopy, packed 4:2:2 -> 4:2:0 from page-locked memory, built so that the upload is the first
// work this frame puts on the GPU and nothing stands between its last byte and the kernel:
// - the bands' copies, each followed by a flag write, go on copyStream first (a host thread
//   descheduled after them delays the kernel, never the data it waits for); in the steady state no
//   CUDA call comes before them: the staging slot is one the host already saw released;
// - the kernel goes on `s` with no stream dependency on the copies; its blocks wait on the GPU for
//   their band's ticket;
// - nothing on `s` waits for the copies' completion before the ready event: every block waits for
//   the ticket of its last row's band, the blocks of the last band for the last ticket, which the
//   copy stream writes only after every band's copy has completed (stream order; the write's memory
//   barrier makes the bytes visible first). So the kernel's completion, hence the ready event after
//   it, already implies that the source has been read and the staging buffer written. The one
//   exception is a kernel that timed out (100 ms without its band): it returns early, its ready event
//   may fire while the upload still runs; the converter then throws (throwIfSignalTimedOut), after
//   waiting for its uploads, at the next convert() or at once with Completion::kWait. Tests:
//   SignalledKernelWaitsForItsTicketAndTimesOut (the timeout), the Signalled* and AllPairs cases
//   (ready alone orders the check of dst, 1 and several bands).
// A kernel must not start its 100 ms clock long before its copy can run: when the copy stream has to
// wait (for the slot's previous reader or the source's event, now or for an earlier frame, until the
// host has seen those waits pass), `s` first waits for the point after them (copyUnblocked).
GpuConverter::Impl::StagingSlot& GpuConverter::Impl::signalledUpload(const Frame& src, const Frame& dst,
                                                                     cudaStream_t s, Completion completion) {
  const std::uint32_t w = src.width, h = src.height, pitch = src.pitch[0];
  const std::size_t bytes = planeSpan(pitch, planeShape(src.format, 0, w, h));
  StagingSlot& slot = ring[static_cast<std::size_t>(nextSlot)];
  nextSlot = (nextSlot + 1) % kStagingSlots;
  bool copyWaits = false;
  if (slot.buffer.size() < bytes) {
    if (!slot.knownFree) slot.released.synchronize();  // the old buffer may still be read
    slot.buffer.reset();
    slot.buffer = DeviceBuffer(device, bytes);
    slot.knownFree = true;
  } else if (!slot.knownFree && !slot.released.completed()) {
    check(cudaStreamWaitEvent(copyStream.get(), slot.released.get(), 0), "cudaStreamWaitEvent(staging slot)");
    copyWaits = true;
  }
  slot.knownFree = false;  // read by this frame's kernel from now on
  if (src.gpu.readyEvent) {
    check(cudaStreamWaitEvent(copyStream.get(), static_cast<cudaEvent_t>(src.gpu.readyEvent), 0),
          "cudaStreamWaitEvent(source, copy stream)");
    copyWaits = true;
  }
  if (copyWaits) {
    copyUnblocked.record(copyStream.get());
    copyMayBeBlocked = true;
  }

  std::uint8_t* base = slot.buffer.data();
  const std::uint32_t bandRows = bandRowsFor(h, stripes);
  const std::uint32_t bands = (h + bandRows - 1) / bandRows;
  if (nextTicket == 0 || nextTicket + bands - 1 < nextTicket) nextTicket = 1;  // wrap: skip 0
  const std::uint32_t firstTicket = nextTicket;
  nextTicket += bands;
  for (std::uint32_t band = 0; band < bands; ++band) {
    const std::uint32_t y0 = band * bandRows;
    copyBand(src, base, y0, std::min(bandRows, h - y0));
    // Before the last flag: the kernel's completion then implies this timing event's too.
    if (band + 1 == bands && completion == Completion::kWait) ingestDone.record(copyStream.get());
    flag.set(copyStream.get(), firstTicket + band);
  }

  if (copyMayBeBlocked && !copyWaits && copyUnblocked.completed()) copyMayBeBlocked = false;
  if (copyMayBeBlocked)
    check(cudaStreamWaitEvent(s, copyUnblocked.get(), 0), "cudaStreamWaitEvent(upload unblocked)");
  kernels::PlanesIn in;
  in.data[0] = base;
  in.pitch[0] = pitch;
  const kernels::IngestSignal signal{flag.word(), firstTicket, bandRows, signalErrorOnDevice};
  kernels::packed422To420(
      src.format == PixelFormat::kYUYV ? kernels::Packed422::kYUYV : kernels::Packed422::kUYVY,
      dst.format == PixelFormat::kNV12 ? kernels::Out420::kNV12 : kernels::Out420::kI420, in, planesOut(dst),
      w, h, s, &signal);
  return slot;
}

// After a signalled frame was enqueued (its upload already running): asks whether the next frame's
// staging slot and the copy stream's waits are done, so that the next frame's upload needs no CUDA
// call before it.
void GpuConverter::Impl::settleSignalled() {
  StagingSlot& next = ring[static_cast<std::size_t>(nextSlot)];
  if (!next.knownFree && next.released.completed()) next.knownFree = true;
  if (copyMayBeBlocked && copyUnblocked.completed()) copyMayBeBlocked = false;
}

}  // namespace zerohop
