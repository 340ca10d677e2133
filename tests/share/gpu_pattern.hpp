#pragma once
// Device-side pattern for the share gpu tests and benchmark: the same bytes as
// share_test::patternByte (derived from the frame sequence), written and checked by kernels on a
// caller's stream. Thread-safety: PatternChecker is thread-bound.

#include <cuda_runtime_api.h>

#include <cstdint>

#include "gpu/cuda_handles.hpp"
#include "zerohop/frame.hpp"
#include "zerohop/pixel_format.hpp"

namespace zerohop::share_test {

/// Writes the pattern of `sequence` into every meaningful byte of the device frame `f` (layout `l`).
void launchFillPattern(const Frame& f, const ImageLayout& l, std::uint64_t sequence, cudaStream_t stream);

/// Counts mismatching bytes of a device frame with a kernel on `stream` (after whatever the stream
/// already waits on), then waits for the stream: returns the mismatch count.
class PatternChecker {
 public:
  explicit PatternChecker(int device);
  std::uint32_t check(const Frame& f, const ImageLayout& l, std::uint64_t sequence, cudaStream_t stream);

 private:
  DeviceBuffer counter_;
  PinnedBuffer result_;
};

}  // namespace zerohop::share_test
