#pragma once
// Test helper: a CUDA kernel reads device rows given as (data, step), the way a GpuMat holds them.
// Thread-safety: reentrant.

#include <cstddef>
#include <string>
#include <vector>

namespace zerohop::testing {

/// Per-row byte sums of `rows` rows of `widthBytes` bytes at `data` (device) with pitch `step`,
/// computed by a kernel on a stream that first waits for `waitEvent` (a cudaEvent_t, may be null).
/// Returns "" or the CUDA error.
std::string deviceRowSums(const void* data, std::size_t step, int rows, int widthBytes, void* waitEvent,
                          std::vector<unsigned>& sums);

}  // namespace zerohop::testing
