// A kernel that reads a cv::cuda::GpuMat through its data pointer and step (no OpenCV in here):
// one thread per row sums the row's first `widthBytes` bytes.
#include "gpu_mat_kernel.hpp"

#include <cuda_runtime.h>

namespace zerohop::testing {
namespace {

__global__ void rowSumsKernel(const unsigned char* data, size_t step, int rows, int widthBytes, unsigned* out) {
  const int r = blockIdx.x * blockDim.x + threadIdx.x;
  if (r >= rows) return;
  unsigned s = 0;
  const unsigned char* row = data + static_cast<size_t>(r) * step;
  for (int x = 0; x < widthBytes; ++x) s += row[x];
  out[r] = s;
}

}  // namespace

std::string deviceRowSums(const void* data, std::size_t step, int rows, int widthBytes, void* waitEvent,
                          std::vector<unsigned>& sums) {
  cudaStream_t stream = nullptr;
  if (cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking) != cudaSuccess) return "cudaStreamCreate failed";
  if (waitEvent) cudaStreamWaitEvent(stream, static_cast<cudaEvent_t>(waitEvent), 0);
  unsigned* out = nullptr;
  cudaMalloc(&out, sizeof(unsigned) * static_cast<size_t>(rows));
  rowSumsKernel<<<(rows + 127) / 128, 128, 0, stream>>>(static_cast<const unsigned char*>(data), step, rows,
                                                         widthBytes, out);
  sums.assign(static_cast<size_t>(rows), 0);
  cudaMemcpyAsync(sums.data(), out, sizeof(unsigned) * sums.size(), cudaMemcpyDeviceToHost, stream);
  const cudaError_t err = cudaStreamSynchronize(stream);
  cudaFree(out);
  cudaStreamDestroy(stream);
  return err == cudaSuccess ? std::string() : std::string("kernel: ") + cudaGetErrorString(err);
}

}  // namespace zerohop::testing
