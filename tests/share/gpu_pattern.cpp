#include "gpu_pattern.hpp"

#include <array>

#include "gpu/cuda_check.hpp"
#include "gpu_pattern_kernels.hpp"

namespace zerohop::share_test {
namespace {

std::array<PlaneView, kMaxPlanes> viewsOf(const Frame& f, const ImageLayout& l) {
  std::array<PlaneView, kMaxPlanes> v{};
  for (std::uint32_t p = 0; p < l.planeCount; ++p) {
    v[p] = PlaneView{f.data[p], f.pitch[p], l.planes[p].widthBytes, l.planes[p].rows};
  }
  return v;
}

}  // namespace

void launchFillPattern(const Frame& f, const ImageLayout& l, std::uint64_t sequence, cudaStream_t stream) {
  const auto v = viewsOf(f, l);
  launchFillPlanes(v.data(), l.planeCount, sequence, stream);
}

PatternChecker::PatternChecker(int device)
    : counter_(device, sizeof(std::uint32_t)), result_(device, sizeof(std::uint32_t)) {}

std::uint32_t PatternChecker::check(const Frame& f, const ImageLayout& l, std::uint64_t sequence,
                                    cudaStream_t stream) {
  auto* bad = reinterpret_cast<std::uint32_t*>(counter_.data());
  cuda::check(cudaMemsetAsync(bad, 0, sizeof(std::uint32_t), stream), "cudaMemsetAsync(mismatch counter)");
  const auto v = viewsOf(f, l);
  launchCheckPlanes(v.data(), l.planeCount, sequence, bad, stream);
  cuda::check(cudaMemcpyAsync(result_.data(), bad, sizeof(std::uint32_t), cudaMemcpyDeviceToHost, stream),
              "cudaMemcpyAsync(mismatch count)");
  cuda::check(cudaStreamSynchronize(stream), "cudaStreamSynchronize(check)");
  return *reinterpret_cast<const std::uint32_t*>(result_.data());
}

}  // namespace zerohop::share_test
