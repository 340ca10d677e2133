#pragma once
// Internal: CUDA driver functions reached through the runtime, so that libcuda is never linked and a
// binary starts (and answers "no GPU") on a machine without the driver.
// Thread-safety: both functions are reentrant.

#include <cuda.h>

#include <string>

namespace zerohop::cuda {

/// The driver function `symbol` with the CUDA 12.0 ABI (cudaGetDriverEntryPointByVersion on runtimes
/// from 12.5, cudaGetDriverEntryPoint before), or null when this runtime or driver does not have it.
/// Clears the runtime's sticky error a failed lookup leaves.
void* driverEntryPoint(const char* symbol) noexcept;

/// "CUDA_ERROR_..." for a driver status (cuGetErrorName), or "CUresult N" where that is unavailable.
std::string driverErrorName(CUresult status);

}  // namespace zerohop::cuda
