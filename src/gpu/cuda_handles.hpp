#pragma once
// Internal: move-only owners of CUDA handles. Constructors throw zerohop::Error naming the failing
// call; destructors log a failed teardown and never throw; a moved-from owner holds nothing.
// Each handle remembers its device and makes it current to destroy itself.
// Thread-safety: each object is thread-bound while used; distinct objects are independent.

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>
#include <utility>

namespace zerohop {

/// The numerically lowest, i.e. highest, stream priority of `device` (cudaDeviceGetStreamPriorityRange).
int highestStreamPriority(int device);

/// A non-blocking CUDA stream (does not synchronise with the legacy default stream).
class CudaStream {
 public:
  CudaStream() = default;  ///< empty
  /// `priority`: 0 = the default; lower is higher (highestStreamPriority); it orders only the
  /// scheduling of kernels' pending blocks, never copies, and preempts nothing already running.
  explicit CudaStream(int device, int priority = 0);
  ~CudaStream() { reset(); }
  CudaStream(CudaStream&& o) noexcept { *this = std::move(o); }
  CudaStream& operator=(CudaStream&& o) noexcept;
  CudaStream(const CudaStream&) = delete;
  CudaStream& operator=(const CudaStream&) = delete;

  cudaStream_t get() const noexcept { return stream_; }
  int device() const noexcept { return device_; }
  void synchronize() const;
  void reset() noexcept;

 private:
  cudaStream_t stream_ = nullptr;
  int device_ = -1;
};

/// A CUDA event. `timing` = false creates it with cudaEventDisableTiming (cheapest to record/wait).
class CudaEvent {
 public:
  CudaEvent() = default;  ///< empty
  CudaEvent(int device, bool timing);
  ~CudaEvent() { reset(); }
  CudaEvent(CudaEvent&& o) noexcept { *this = std::move(o); }
  CudaEvent& operator=(CudaEvent&& o) noexcept;
  CudaEvent(const CudaEvent&) = delete;
  CudaEvent& operator=(const CudaEvent&) = delete;

  cudaEvent_t get() const noexcept { return event_; }
  void record(cudaStream_t stream) const;
  void synchronize() const;
  /// cudaEventQuery: true once the work before the last record has completed (or never recorded),
  /// false while it is pending; throws on any other status. Never blocks.
  bool completed() const;
  /// Milliseconds from `start` to this event (both recorded with timing, both complete).
  float elapsedMsSince(const CudaEvent& start) const;
  void reset() noexcept;

 private:
  cudaEvent_t event_ = nullptr;
  int device_ = -1;
};

/// Linear device memory from cudaMalloc (256-byte aligned or better).
class DeviceBuffer {
 public:
  DeviceBuffer() = default;
  DeviceBuffer(int device, std::size_t bytes);
  ~DeviceBuffer() { reset(); }
  DeviceBuffer(DeviceBuffer&& o) noexcept { *this = std::move(o); }
  DeviceBuffer& operator=(DeviceBuffer&& o) noexcept;
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;

  std::uint8_t* data() const noexcept { return data_; }
  std::size_t size() const noexcept { return bytes_; }
  int device() const noexcept { return device_; }
  void reset() noexcept;

 private:
  std::uint8_t* data_ = nullptr;
  std::size_t bytes_ = 0;
  int device_ = -1;
};

/// Page-locked host memory from cudaHostAlloc (portable; mapped when the device can map host memory).
class PinnedBuffer {
 public:
  PinnedBuffer() = default;
  PinnedBuffer(int device, std::size_t bytes);
  ~PinnedBuffer() { reset(); }
  PinnedBuffer(PinnedBuffer&& o) noexcept { *this = std::move(o); }
  PinnedBuffer& operator=(PinnedBuffer&& o) noexcept;
  PinnedBuffer(const PinnedBuffer&) = delete;
  PinnedBuffer& operator=(const PinnedBuffer&) = delete;

  std::uint8_t* data() const noexcept { return data_; }
  std::size_t size() const noexcept { return bytes_; }
  void reset() noexcept;

 private:
  std::uint8_t* data_ = nullptr;
  std::size_t bytes_ = 0;
};

/// cudaHostAlloc flags zerohop uses for `device`: portable, plus mapped when it can map host memory.
unsigned pinnedAllocFlags(int device);

/// A 32-bit word in device memory (0 at start) that a stream sets to a value once the work enqueued
/// on it before has completed: the "ticket" kernels of the signalled ingest wait for. Written with
/// cuStreamWriteValue32 (default flags: a memory barrier orders the earlier work's writes before it)
/// where the driver offers it, else by a 4-byte cudaMemcpyAsync from a ring of page-locked words
/// (each reused only after its copy has run). Thread-bound.
class StreamFlag {
 public:
  StreamFlag() = default;  ///< empty
  /// `allowStreamWrite` = false always takes the copy (what drivers without stream memory ops get).
  explicit StreamFlag(int device, bool allowStreamWrite = true);
  ~StreamFlag();
  StreamFlag(StreamFlag&&) noexcept;
  StreamFlag& operator=(StreamFlag&&) noexcept;
  StreamFlag(const StreamFlag&) = delete;
  StreamFlag& operator=(const StreamFlag&) = delete;

  const std::uint32_t* word() const noexcept { return reinterpret_cast<const std::uint32_t*>(word_.data()); }
  /// Enqueues "set the word to `value`" on `stream`, after the work already on it.
  void set(cudaStream_t stream, std::uint32_t value);
  /// "cuStreamWriteValue32" or "cudaMemcpyAsync" (a stream write that failed as unsupported falls back).
  const char* writer() const noexcept;

 private:
  static constexpr int kRing = 16;
  DeviceBuffer word_;
  void* writeValue_ = nullptr;   // the driver's cuStreamWriteValue32, or null
  PinnedBuffer ring_;            // kRing words for the copy (allocated on first use)
  CudaEvent ringCopied_[kRing];  // recorded after each word's copy
  int next_ = 0;
  int device_ = -1;
};

}  // namespace zerohop
