#pragma once
// The DLPack ABI (https://dmlc.github.io/dlpack/latest/c_api.html), the part a producer needs:
// the legacy DLManagedTensor (v0.6-0.8, capsule "dltensor") and DLManagedTensorVersioned (v1.0,
// capsule "dltensor_versioned", which can say "read-only"). Written out here rather than taken from a
// package because the layout is fixed by the spec and tiny, and the GPU machine (Ubuntu, pip pybind11)
// has no dlpack header. In a namespace so it cannot collide with another copy of dlpack.h.
// Thread-safety: plain data.

#include <cstdint>

namespace zerohop::python::dlpack {

inline constexpr std::uint32_t kMajorVersion = 1;
inline constexpr std::uint32_t kMinorVersion = 0;

enum DLDeviceType : std::int32_t {
  kDLCPU = 1,
  kDLCUDA = 2,
  kDLCUDAHost = 3,  ///< pinned host memory (cudaMallocHost)
};

struct DLDevice {
  DLDeviceType device_type;
  std::int32_t device_id;
};

enum DLDataTypeCode : std::uint8_t { kDLInt = 0, kDLUInt = 1, kDLFloat = 2 };

struct DLDataType {
  std::uint8_t code;
  std::uint8_t bits;
  std::uint16_t lanes;
};

struct DLTensor {
  void* data;
  DLDevice device;
  std::int32_t ndim;
  DLDataType dtype;
  std::int64_t* shape;
  std::int64_t* strides;  ///< in elements; nullptr = compact row-major
  std::uint64_t byte_offset;
};

struct DLManagedTensor {
  DLTensor dl_tensor;
  void* manager_ctx;
  void (*deleter)(DLManagedTensor* self);
};

struct DLPackVersion {
  std::uint32_t major;
  std::uint32_t minor;
};

inline constexpr std::uint64_t kFlagReadOnly = 1u << 0;

struct DLManagedTensorVersioned {
  DLPackVersion version;
  void* manager_ctx;
  void (*deleter)(DLManagedTensorVersioned* self);
  std::uint64_t flags;
  DLTensor dl_tensor;
};

static_assert(sizeof(DLTensor) == 48 && sizeof(DLManagedTensor) == 64 && sizeof(DLManagedTensorVersioned) == 80,
              "DLPack ABI layout");

}  // namespace zerohop::python::dlpack
