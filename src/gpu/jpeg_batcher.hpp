#pragma once
// nvJPEG decoders shared by the MJPEG cameras of one GPU. Each camera's thread hands its
// frame to decode() and blocks; a worker thread takes every frame waiting at that moment (up to
// maxBatch) and decodes them with one GpuJpegDecoder::decodeBatch() call, so the JPEG engines work
// on several cameras' frames at once. The batch grows by itself with the load: while one call runs,
// the frames that arrive meanwhile form the next (gather > 0 also waits that long after the first
// frame of a batch for more). `decoders` workers, each with its own decoder and stream, take turns
// on the one queue, so one batch's host work overlaps another's decode.
//
// Isolation: decodeBatch() is all-or-nothing, so when a batch fails its frames are decoded again
// one by one and only the bad frame's caller gets its error; every other frame is decoded as if
// alone (byte for byte the same output: the same decoder, the same engines).
//
// Ordering, lifetime: as GpuJpegDecoder::decode(): decode() returns once the frame's work is
// enqueued on the batcher's stream, with dst.gpu.readyEvent recorded behind it; keep the JPEG bytes
// unchanged until that event completed. The caller's frames are borrowed only until decode() returns.
// Thread-safety: decode() and stats() from any number of threads; construction and destruction on
// one. Destruction fails the frames still waiting (Error kUnavailable) and joins the worker.

#include <chrono>
#include <cstdint>
#include <memory>
#include <string>

#include "zerohop/export.h"
#include "zerohop/frame.hpp"
#include "zerohop/gpu_jpeg.hpp"

namespace zerohop {

struct JpegBatcherOptions {
  int device = 0;
  JpegBackend backend = JpegBackend::kAuto;
  std::size_t maxBatch = 64;            ///< frames per nvJPEG call at most
  std::chrono::microseconds gather{0};  ///< wait this long after a batch's first frame for more
  int decoders = 1;  ///< workers, each with its own decoder (1..8); on the H200 two gave fewer frames/s than one
};

struct JpegBatcherStats {
  std::uint64_t frames = 0;        ///< frames decoded (not counting failed ones)
  std::uint64_t failed = 0;        ///< frames whose caller got an error
  std::uint64_t batches = 0;       ///< nvJPEG batched calls that succeeded
  std::uint64_t retriedBatches = 0;  ///< batches that failed and were decoded frame by frame
  std::size_t largestBatch = 0;
};

class ZEROHOP_API JpegBatcher {
 public:
  /// Creates the decoders on `options.device` (throws as GpuJpegDecoder's constructor does) and
  /// starts the workers. maxBatch outside 1..1024 or decoders outside 1..8 throws kInvalidArgument.
  explicit JpegBatcher(JpegBatcherOptions options);
  ~JpegBatcher();
  JpegBatcher(const JpegBatcher&) = delete;
  JpegBatcher& operator=(const JpegBatcher&) = delete;

  /// Decodes `jpeg` into `dst` (the contract of GpuJpegDecoder::decode, Completion::kAsync) within
  /// a batch; blocks until its batch is enqueued. Throws this frame's own error.
  void decode(const Frame& jpeg, Frame& dst);

  JpegBatcherStats stats() const;
  std::string describe() const;  ///< the decoders' describe() and the batch limit
  int device() const noexcept;

  /// The process's batcher for `device` (default options on it), made on first use and shared by
  /// every caller until the last one lets go: the cameras of one GPU meet in it. Thread-safe.
  static std::shared_ptr<JpegBatcher> forDevice(int device);

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace zerohop
