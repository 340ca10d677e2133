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
/// Sums every byte into *sum (device memory). One block per row, or, with maxBlocks > 0, at most
/// maxBlocks blocks per plane that stride over the rows (fewer SMs held per reader).
void launchReadFrame(const PlaneView* planes, std::uint32_t count, unsigned long long* sum,
                     cudaStream_t stream, std::uint32_t maxBlocks = 0);
/// How many SMs this context can run blocks on: the number of distinct %smid that a grid of
/// short-lived spinning blocks (more than the GPU holds at once) ran on. Synchronous; start-up only.
int countSmsUsed(int device);

}  // namespace zerohop::bench
