#pragma once
// Kernels of the share gpu tests, on plain plane views (this header is compiled by nvcc as C++17,
// so it includes no zerohop headers). Thread-safety: reentrant.
#include <cuda_runtime_api.h>

#include <cstdint>

namespace zerohop::share_test {

struct PlaneView {
  std::uint8_t* data = nullptr;
  std::uint32_t pitch = 0, widthBytes = 0, rows = 0;
};

void launchFillPlanes(const PlaneView* planes, std::uint32_t count, std::uint64_t sequence,
                      cudaStream_t stream);
/// Adds the number of bytes that differ from the pattern of `sequence` to *bad (device memory).
void launchCheckPlanes(const PlaneView* planes, std::uint32_t count, std::uint64_t sequence,
                       std::uint32_t* bad, cudaStream_t stream);

}  // namespace zerohop::share_test
