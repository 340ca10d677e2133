#include "gpu/driver_entry.hpp"

#include <cuda_runtime_api.h>

namespace zerohop::cuda {

void* driverEntryPoint(const char* symbol) noexcept {
  void* fn = nullptr;
  cudaDriverEntryPointQueryResult found = cudaDriverEntryPointSymbolNotFound;
#if CUDART_VERSION >= 12050
  const cudaError_t status = cudaGetDriverEntryPointByVersion(symbol, &fn, 12000, cudaEnableDefault, &found);
#else
  const cudaError_t status = cudaGetDriverEntryPoint(symbol, &fn, cudaEnableDefault, &found);
#endif
  if (status != cudaSuccess) (void)cudaGetLastError();
  return status == cudaSuccess && found == cudaDriverEntryPointSuccess ? fn : nullptr;
}

std::string driverErrorName(CUresult status) {
  static const auto getName = reinterpret_cast<decltype(&cuGetErrorName)>(driverEntryPoint("cuGetErrorName"));
  const char* name = nullptr;
  if (getName != nullptr && getName(status, &name) == CUDA_SUCCESS && name != nullptr) return name;
  return "CUresult " + std::to_string(static_cast<int>(status));
}

}  // namespace zerohop::cuda
