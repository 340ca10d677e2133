#pragma once
// MJPEG on the GPU: one camera JPEG (host or page-locked memory) becomes an NV12 or I420 frame in
// VRAM, decoded by nvJPEG, with the CUDA event that says when it is ready. No CUDA or nvJPEG types
// here (users build without those SDKs); libnvjpeg.so.13 is loaded at run time (dlopen), so programs start without it.
//
// Backends (chosen at construction; backendName()/describe() say which and why):
//   hardware    the GPU's JPEG engines (A100/A30/H100/H200), through nvjpegDecodeBatched (a batch of
//               one for decode(), or of its restart strips: setRestartStrips); streams the engines
//               refuse (progressive) go to GPU-hybrid
//   gpu-hybrid  decoupled API (host phase, transfer, device phase); measured on the H200, a single
//               frame's decode() costs about its whole latency in CPU time (Huffman on the host)
//   hybrid      Huffman decode on the CPU, decoupled API
//   default     nvJPEG's own choice, decoupled API
//   auto        hardware where the GPU has engines, gpu-hybrid elsewhere
//
// Overlap: decode() returns once the work is enqueued. With the decoupled API the host phase of
// the next frame runs while the GPU still works on this one (two pinned buffers + two parsed
// streams, alternating; a pinned buffer is reused only after its copy to the device finished).
//
// Output: Y is written as decoded. Chroma of 4:2:0 JPEGs is written as decoded; 4:2:2, 4:4:0 and
// 4:4:4 chroma is reduced to 4:2:0 by a kernel averaging the 2 (or 4) samples of each 2x2 block,
// rounded half up: (a + b + 1) >> 1, (a + b + c + d + 2) >> 2. Greyscale gives chroma 128.
// dst.color = BT.601 full range (JFIF). 4:2:0 outputs need even width and height.
//
// Errors: a frame that is empty, not framed as a JPEG (SOI / EOI), of another size than dst, or that
// nvJPEG rejects throws zerohop::Error naming the nvJPEG call and its status
// ("nvjpegDecodeJpegHost failed: NVJPEG_STATUS_BAD_JPEG ..."); the decoder state is rebuilt, so the
// next frame decodes normally.
//
// Ordering (on the GPU, through events): like GpuConverter. Work runs on the decoder's own stream; dst.gpu.readyEvent
// is an event owned by the decoder, one for each of the 32 destination buffers written most recently
// (as GpuConverter), valid while the decoder lives.
// Keep the JPEG bytes unchanged until dst.gpu.readyEvent completed (the hardware engines may read
// them after decode() returned); the decoupled path is done with them when decode() returns.
// Thread-safety: thread-bound (one decoder per pipeline thread).

#include <cstdint>
#include <memory>
#include <span>
#include <string>

#include "zerohop/export.h"
#include "zerohop/frame.hpp"
#include "zerohop/gpu_convert.hpp"

namespace zerohop {

enum class JpegBackend : std::uint8_t { kAuto, kHardware, kGpuHybrid, kHybrid, kDefault };
ZEROHOP_API const char* jpegBackendName(JpegBackend backend) noexcept;

/// Whether nvJPEG can be used on `device`, without creating a decoder: libnvjpeg loads, the device
/// works, and whether it has hardware JPEG engines. Never throws.
struct JpegSupport {
  bool available = false;
  std::string reason;          ///< why not available ("libnvjpeg.so.13 not found: ..."); empty when available
  std::string libraryVersion;  ///< "13.0.2"
  bool hardware = false;       ///< hardware JPEG engines present
  std::string hardwareReason;  ///< "3 engines x 1 core" or why there is no hardware backend
};
ZEROHOP_API JpegSupport probeJpeg(int device);

class ZEROHOP_API GpuJpegDecoder {
 public:
  /// Loads libnvjpeg, creates the handle(s), decoder state, pinned/device buffers and the stream on
  /// `device`. kAuto picks hardware when the GPU has JPEG engines, else gpu-hybrid. Asking for
  /// kHardware on a GPU without engines throws Error(kUnsupported); no GPU or no libnvjpeg throws
  /// Error(kUnavailable) with the reason.
  explicit GpuJpegDecoder(int device, JpegBackend backend = JpegBackend::kAuto);
  ~GpuJpegDecoder();  ///< synchronises its stream before freeing
  GpuJpegDecoder(GpuJpegDecoder&&) noexcept;
  GpuJpegDecoder& operator=(GpuJpegDecoder&&) noexcept;
  GpuJpegDecoder(const GpuJpegDecoder&) = delete;
  GpuJpegDecoder& operator=(const GpuJpegDecoder&) = delete;

  /// Decodes `jpeg` (kMJPEG, kHost or kPinned, bytesUsed bytes at data[0]) into `dst` (kNV12 or kI420,
  /// kDevice, same size as the JPEG, pixels allocated, e.g. a BufferPool slot from makeDeviceAllocator).
  /// Copies sequence, timestamps and keyframe, sets dst.color and dst.gpu, marks Stage::kIngest and
  /// Stage::kConvert (enqueue time for kAsync, completion for kWait). Throws Error (see above).
  void decode(const Frame& jpeg, Frame& dst, Completion completion = Completion::kAsync);

  /// Decodes jpegs[i] into *dsts[i] with one batched nvJPEG call (the throughput path; on the
  /// hardware backend the engines work on the frames in parallel). All-or-nothing: when any frame is
  /// rejected the call throws and none of the destinations is valid; decode them one by one to find it.
  void decodeBatch(std::span<const Frame* const> jpegs, std::span<Frame* const> dsts,
                   Completion completion = Completion::kAsync);

  /// Restart strips (hardware backend, decode()): a frame whose restart markers (DRI) fall on MCU-row
  /// boundaries is cut at them into horizontal strips that several JPEG engines decode at once, in
  /// one batched call into the same destination (bit-exact with the whole frame; a frame without
  /// such markers is decoded whole). Up to `maxStrips` strips of at least `minStripRows` pixel rows
  /// (a frame under 2 x minStripRows rows still gets 2); maxStrips 1 turns it off. Defaults measured on the H200 (7 engines):
  /// 7 strips, 150 rows (720p: 4 strips, 1080p and 4K: 7; docs/benchmarks-gpu.md, MJPEG).
  static constexpr int kDefaultRestartStrips = 7;
  static constexpr int kDefaultMinStripRows = 150;
  void setRestartStrips(int maxStrips, int minStripRows = kDefaultMinStripRows);
  int restartStrips() const noexcept;
  /// How many strips the last decode() used: 1 = the whole frame.
  int lastStripCount() const noexcept;

  JpegBackend backend() const noexcept;  ///< the backend in use (never kAuto)
  const char* backendName() const noexcept;
  /// One line: "nvJPEG 13.0.2 hardware (3 engines x 1 core) on device 0" / "... gpu-hybrid (no
  /// hardware JPEG decoder: nvjpegCreateEx(hardware): NVJPEG_STATUS_ARCH_MISMATCH)".
  std::string describe() const;
  void* stream() const noexcept;  ///< the decoder's cudaStream_t
  int device() const noexcept;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace zerohop
