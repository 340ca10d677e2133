#pragma once
// The two kernels of the share hand-off benchmark on plain plane views (compiled by nvcc as C++17:
// no zerohop headers here): the publisher writes a whole frame, a reader reads every byte of it
// once ("uses the frame"). Thread-safety: reentrant.
#include <cuda_runtime_api.h>

#include <cstdint>

namespace zerohop::bench {

struct PlaneView {
  std::uint8_t* data = nullptr;
  std::uint32_t pitch = 0, widthBytes = 0, rows = 0;
};

void launchWriteFrame(const PlaneView* planes, std::uint32_t count, std::uint64_t sequence,
                      cudaStream_t stream);
/// Sums every byte into *sum (device memory).
void launchReadFrame(const PlaneView* planes, std::uint32_t count, unsigned long long* sum,
                     cudaStream_t stream);

}  // namespace zerohop::bench
